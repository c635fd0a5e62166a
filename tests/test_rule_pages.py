"""One page per rule under docs/rules, generated from the registry and kept up to date; the link
each diagnostic carries to its page."""

from urllib.parse import urlparse
from urllib.request import url2pathname

from paths import REPO
from taskdsl.rules import pages as rule_pages
from taskdsl.rules import RULES


def test_every_code_has_an_up_to_date_page():
    folder = REPO / "docs" / "rules"
    written = {path.name: path.read_text(encoding="utf-8") for path in folder.glob("TD*.md")}
    assert written == rule_pages.pages(), "regenerate with: .venv/bin/python -m taskdsl.rules.pages"


def test_a_page_holds_the_registry_entry():
    text = rule_pages.page("TD201")
    assert text.startswith("# TD201: steps on a non-sequential task, or a sequential without steps\n")
    assert "Severity: **error**" in text
    assert RULES["TD201"].good in text and RULES["TD201"].fix in text


def test_default_link_is_a_file_url_to_an_existing_page():
    href = rule_pages.href("TD201")
    parsed = urlparse(href)
    assert parsed.scheme == "file" and href.endswith("/TD201.md")
    page = url2pathname(parsed.path)
    with open(page, encoding="utf-8") as handle:
        assert handle.read() == rule_pages.page("TD201")


def test_the_setting_moves_the_links():
    assert rule_pages.href("TD305", "https://example.org/taskdsl/docs/rules") == \
        "https://example.org/taskdsl/docs/rules/TD305.md"
    assert rule_pages.href("TD305", "https://example.org/r/") == "https://example.org/r/TD305.md"


def test_unknown_code_has_no_link():
    assert rule_pages.href("TD999") is None


def test_writing_removes_stale_pages_and_is_stable(tmp_path):
    (tmp_path / "TD998.md").write_text("old", encoding="utf-8")
    changed = rule_pages.write(tmp_path)
    assert "TD998.md" in changed and not (tmp_path / "TD998.md").exists()
    assert rule_pages.write(tmp_path) == []


def test_the_configuration_knows_every_code_of_the_registry_from_the_shipped_pages():
    """project.config sits below the rules: it reads the codes from the rule pages, which must be
    exactly the registry's (an unknown code in `select` is TD902, a known one is not)."""
    from taskdsl.project import config
    from taskdsl.rules import RULES

    assert config.known_codes() == sorted(RULES)
