"""The bundled examples are real, valid templates: they check clean, together, as a workspace."""

from pathlib import Path

import pytest

from taskdsl.rules.checker import check_text

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FILES = sorted(EXAMPLES.rglob("*.task.xml"))


def workspace_library():
    from taskdsl.library import Library
    from taskdsl.project.settings import Settings

    library = Library(Settings())
    for path in FILES:
        library.update_file(str(path))
    return library


def test_there_is_an_example_of_every_kind():
    roots = {path.name: path.read_text() for path in FILES}
    joined = "\n".join(roots.values())
    for construct in ['type="atomic"', 'type="sequential"', 'type="reduce"', 'type="script"', "<cond>", "<library>", "<template", "<call template=", "ref="]:
        assert construct in joined, construct


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_example_checks_clean(path):
    result = check_text(path.read_text(encoding="utf-8"), path=str(path), library=workspace_library())
    assert [(d.code, d.message) for d in result.diagnostics] == []
