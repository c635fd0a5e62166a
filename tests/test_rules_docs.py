"""Every registered code is documented in docs/rules.md, and every doc entry is complete."""

from paths import REPO
from taskdsl.rules import RULES


def test_docs_list_every_code_with_complete_entries():
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    missing = [code for code in RULES if f"## {code}\n" not in text]
    assert missing == [], "regenerate docs/rules.md (command at its top)"
    for code, entry in RULES.items():
        assert all((entry.title, entry.what, entry.why, entry.bad, entry.good, entry.fix)), code
