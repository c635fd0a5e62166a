"""The grammar tables (what completion, hover, formatting and the schema diagnostics ask at run
time) are generated from task.xsd and answer exactly what the xmlschema model of the XSD answers.

- the committed grammar_tables.json is what `python -m taskdsl.language.schema --write-tables` writes now
  (the XSD stays the one source: change it, regenerate, or this fails);
- every query, on every path the grammar allows down to a depth that walks each recursion more
  than once, and on paths it does not allow, gives the same answer from both;
- completion, hover and the diagnostics of the examples, the upstream corpus and their
  mutations are the same with either model;
- the server's model loads without importing xmlschema.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from evaluator_helpers import run_python
from paths import REPO, corpus_files
from lsprotocol import converters

from taskdsl.language import grammar_tables

from taskdsl.language import schema
from taskdsl.rules.checker import check_text
from taskdsl.language.document import parse
from taskdsl.features import completion, hover
from taskdsl.features.util import Positions

CONVERTER = converters.get_converter()


@pytest.fixture(scope="module")
def xsd():
    return schema.xsd_model()


@pytest.fixture(scope="module")
def tables():
    return grammar_tables.TableModel.load()


def test_the_committed_tables_are_what_the_xsd_generates_now(xsd):
    assert grammar_tables.TABLES_FILE.read_text(encoding="utf-8") == grammar_tables.serialise(xsd.tables())


def test_write_tables_writes_what_the_package_loads(tmp_path):
    target = tmp_path / "tables.json"
    done = subprocess.run([sys.executable, "-m", "taskdsl.language.schema", "--write-tables", str(target)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(target)
    assert target.read_text(encoding="utf-8") == grammar_tables.TABLES_FILE.read_text(encoding="utf-8")


def test_the_server_model_is_the_tables_and_needs_no_xmlschema():
    done = run_python("import sys\nfrom taskdsl.language import schema\nm = schema.model()\n"
                      "m.documentation(('task', 'steps', 'task'))\n"
                      "print(type(m).__name__, 'xmlschema' in sys.modules)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["TableModel", "False"]


def _paths(model, depth: int) -> list[tuple[str, ...]]:
    """Every allowed path down to ``depth`` elements, and one step off each (not allowed)."""
    found, frontier = [()], [()]
    for _ in range(depth):
        frontier = [path + (info.name,) for path in frontier for info in model.allowed_children(path)]
        found += frontier
    wrong = [path + ("nope",) for path in found[:200]] + [("description",), ("task", "task"), ("steps",)]
    return found + wrong


def _answers(model, path) -> dict:
    answers = {
        "exists": model.exists(path), "children": model.allowed_children(path), "attributes": model.attributes(path),
        "text": model.enum_values(path), "documentation": model.documentation(path), "mixed": model.is_mixed(path),
        "empty": model.is_empty(path), "simple": model.has_simple_content(path), "max_occurs": model.max_occurs(path),
        "unknown attribute": (model.enum_values(path, "nope"), model.documentation(path, "nope")),
        "unknown value": model.documentation(path, None, "nope"),
    }
    for value, _ in model.enum_values(path):
        answers[f"={value}"] = model.documentation(path, None, value)
    for attribute in model.attributes(path):
        answers[f"@{attribute.name}"] = (model.enum_values(path, attribute.name), model.documentation(path, attribute.name))
        for value, _ in model.enum_values(path, attribute.name):
            answers[f"@{attribute.name}={value}"] = model.documentation(path, attribute.name, value)
    return answers


def test_every_query_on_every_path_answers_the_same(xsd, tables):
    paths = _paths(xsd, 6)
    assert len(paths) > 3000  # the recursion (task → steps → task …) walked several times
    assert paths == _paths(tables, 6)
    for path in paths:
        assert _answers(tables, path) == _answers(xsd, path), path
    assert list(tables.iter_paths()) == list(xsd.iter_paths())


def _texts() -> list[str]:
    files = sorted(REPO.glob("examples/**/*.xml")) + corpus_files()
    texts = [f.read_text(encoding="utf-8") for f in files]
    # half-typed versions: each cut in the middle of a tag, so completion has something to offer
    return texts + [text[: text.find(">", len(text) // 2)] + "\n<" for text in texts[:30]]


def _offsets(text: str) -> list[int]:
    """Where a person asks: on each tag name, attribute name and value, and inside text."""
    doc = parse(text)
    offsets = {len(text)}
    for element in doc.iter():
        offsets |= {element.start + 1, element.start_tag_end - 1}
        offsets |= {attr.name_start for attr in element.attrs}
        offsets |= {attr.value_start for attr in element.attrs if attr.value_start >= 0}
        offsets |= {piece.start + 1 for piece in element.text_pieces}
    return sorted(o for o in offsets if 0 <= o <= len(text))


def _with_model(monkeypatch, model, text: str) -> list:
    monkeypatch.setattr(schema, "_model", model)
    doc = parse(text)
    positions = Positions(doc)
    answers: list = []
    for offset in _offsets(text):
        listed = completion.complete(doc, offset, positions)
        shown = hover.hover(doc, offset, positions)
        answers.append((offset, CONVERTER.unstructure(listed), CONVERTER.unstructure(shown)))
    found = check_text(text)
    answers.append([dataclasses.astuple(d) for d in found.diagnostics])
    return answers


def test_completion_hover_and_diagnostics_are_the_same_with_either_model(monkeypatch, xsd, tables):
    texts = _texts()
    assert len(texts) > (60 if corpus_files() else 20)  # the examples, the corpus (CI has it) and cut copies
    for text in texts:
        assert _with_model(monkeypatch, tables, text) == _with_model(monkeypatch, xsd, text)
