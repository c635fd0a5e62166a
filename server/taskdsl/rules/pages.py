"""One documentation page per diagnostic code (``docs/rules/TDxxx.md``), generated from the rule
registry, and the link every diagnostic carries to its page (LSP ``codeDescription.href``).

Where the links point: the ``docs.rulesUrl`` setting when it is set (for instance a repository's
``…/blob/main/docs/rules/``), else the pages installed with the package (a ``file://`` URL: they
match the installed version and work offline). Regenerate the pages with
``python -m taskdsl.rules.pages`` (a test fails when they are out of date).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from taskdsl.support.resources import SOURCE_ROOT, installed
from taskdsl.rules import RULES

SOURCE_PAGES = SOURCE_ROOT / "docs" / "rules"


def page(code: str) -> str:
    """The Markdown page of one code."""
    rule = RULES[code]
    return (
        f"# {rule.code}: {rule.title}\n\n"
        f"Severity: **{rule.severity.value}**\n\n"
        f"## What\n\n{rule.what}\n\n"
        f"## Why\n\n{rule.why}\n\n"
        f"## Bad\n\n```xml\n{rule.bad}\n```\n\n"
        f"## Good\n\n```xml\n{rule.good}\n```\n\n"
        f"## Fix\n\n{rule.fix}\n\n"
        "All codes: [rules.md](../rules.md). Generated from the rule registry by "
        "`python -m taskdsl.rules.pages`; do not edit by hand.\n"
    )


def pages() -> dict[str, str]:
    """File name → page text, for every registered code."""
    return {f"{code}.md": page(code) for code in sorted(RULES)}


def installed_pages() -> Path:
    """The pages' folder: inside the wheel, else the source tree's ``docs/rules``."""
    return installed("docs/rules", "docs/rules")


@functools.cache
def default_base_url() -> str:
    return installed_pages().as_uri() + "/"


def href(code: str, base_url: str | None = None) -> str | None:
    """The page of a code, under ``base_url`` (the setting) or the installed pages; None for an
    unknown code."""
    if code not in RULES:
        return None
    base = base_url or default_base_url()
    return f"{base if base.endswith('/') else base + '/'}{code}.md"


def write(folder: Path = SOURCE_PAGES) -> list[str]:
    """Write every page (and remove pages of codes that no longer exist); the files changed."""
    from taskdsl.support import files

    wanted = pages()
    changed = []
    for name, text in wanted.items():
        target = folder / name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            files.write_text(str(target), text, root=str(folder.parent), make_folders=True, mode=0o644,
                             keep_mode=True)
            changed.append(name)
    for stale in folder.glob("TD*.md"):
        if stale.name not in wanted:
            stale.unlink()
            changed.append(stale.name)
    return changed


if __name__ == "__main__":
    for name in write(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE_PAGES):
        print(name)
