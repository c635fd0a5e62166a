"""Where the tests find the shared material: `shared/` beside the checkout (`../shared` from the
repository's root), as CI lays it out in a fresh clone, and nowhere else.

Without it, the tests that read the upstream corpus are skipped on a developer's machine and
fail under CI (`CI=true`): CI must never pass by skipping what it can run.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "upstream"
IN_CI = os.environ.get("CI", "").lower() == "true"
MISSING = (f"the shared corpus is not beside the checkout ({CORPUS} has no INDEX.tsv): "
           "clone shared/ next to the repository")


def corpus_present() -> bool:
    return (CORPUS / "INDEX.tsv").is_file()


def need_corpus() -> None:
    """In a test that reads the corpus: skip it when the corpus is missing, fail it under CI."""
    if not corpus_present():
        if IN_CI:
            pytest.fail(MISSING, pytrace=False)
        pytest.skip(MISSING)


def need_corpus_module() -> None:
    """At the top of a module that reads the corpus as it is collected: skip the module when the
    corpus is missing; under CI a collection error (the run fails)."""
    if not corpus_present():
        if IN_CI:
            raise RuntimeError(MISSING)
        pytest.skip(MISSING, allow_module_level=True)


def corpus_files(pattern: str = "*.xml") -> list[Path]:
    """The corpus files matching `pattern`, sorted; [] on a machine without the corpus, a
    collection error under CI."""
    if not corpus_present():
        if IN_CI:
            raise RuntimeError(MISSING)
        return []
    return sorted(CORPUS.glob(pattern))


def need(available: bool, what: str) -> None:
    """In a test that needs a tool CI installs (Graphviz's dot, npm): skip it when `available` is
    false on a developer's machine, fail it under CI."""
    if not available:
        if IN_CI:
            pytest.fail(f"{what} is missing: scripts/install-e2e.sh installs it", pytrace=False)
        pytest.skip(f"{what} is missing (scripts/install-e2e.sh installs it)")
