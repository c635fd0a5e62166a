"""The semantic model of a text is built once per version: the check's rules, hover and completion
of the same parsed Document (with the same settings) share one FileModel and its scopes, as the
server asks them; a new version (a new Document) gets a new model."""

from __future__ import annotations

import pytest

from taskdsl.meaning import scope

from taskdsl.meaning import model as semantics
from taskdsl.rules.checker import check_document
from taskdsl.language.document import parse
from taskdsl.features import completion, hover
from taskdsl.features.util import Positions
from taskdsl.project.settings import Settings

TEXT = """<task type="sequential" name="pipeline">
  <inputs><input name="topic">rivers</input></inputs>
  <steps>
    <task><description>Outline {{topic}}</description></task>
    <task><description>Expand {{last_output}} about {{topc}}</description></task>
  </steps>
</task>
"""


@pytest.fixture
def builds(monkeypatch) -> dict[str, int]:
    """How many FileModel and Scopes objects are built (wrapping their constructors)."""
    counts = {"model": 0, "scopes": 0}
    for name, cls in (("model", semantics.FileModel), ("scopes", scope.Scopes)):
        original = cls.__init__

        def counted(self, *args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counted)
    return counts


def ask_everything(text: str, settings: Settings) -> list:
    """What the server computes for one version: diagnostics, then hover and completion."""
    doc = parse(text)
    positions = Positions(doc)
    result = check_document(doc, settings=settings)
    shown = hover.describe_at(doc, text.index("{{topic}}") + 3, settings=settings)
    listed = completion.complete(doc, text.index("{{last_output}}") + 2, positions, settings=settings)
    return [[d.code for d in result.diagnostics], [line for line in shown[0].splitlines() if line], sorted(i.label for i in listed.items)]


def test_one_version_builds_one_model_for_the_rules_hover_and_completion(builds):
    settings = Settings()
    answers = ask_everything(TEXT, settings)
    assert answers == [["TD402"], ["**topic**", "an input of an enclosing task", "Default: `rivers`"], ["last_output", "topic"]]
    assert builds == {"model": 1, "scopes": 1}
    ask_everything(TEXT, settings)  # the same text again: the parse cache gives the same Document
    assert builds == {"model": 1, "scopes": 1}


def test_a_new_version_or_new_settings_build_a_new_model(builds):
    settings = Settings()
    ask_everything(TEXT, settings)
    ask_everything(TEXT.replace("rivers", "lakes"), settings)  # an edit: a new Document
    assert builds == {"model": 2, "scopes": 2}
    globals_added = Settings(globals=("topc",))
    assert ask_everything(TEXT.replace("rivers", "lakes"), globals_added)[0] == []  # topc is now a global
    assert builds == {"model": 3, "scopes": 3}


def test_a_checked_document_is_freed_without_the_cyclic_collector():
    """A Document, its model and its scopes hold no reference cycle: an edit's old version is freed
    the moment its last reference goes, not at the next full collection (which walks the heap)."""
    import gc
    import weakref

    doc = parse(TEXT.replace("rivers", "seas"))
    check_document(doc, settings=Settings())
    hover.describe_at(doc, doc.text.index("{{topic}}") + 3)
    watched = [weakref.ref(doc), weakref.ref(semantics.model_of(doc)), weakref.ref(doc.root)]
    gc.disable()
    try:
        del doc
        parse("<task/>"), parse("<cond/>")  # push it out of the parse cache
        assert [ref() for ref in watched] == [None, None, None]
    finally:
        gc.enable()


def test_a_bulk_check_keeps_only_the_last_few_models():
    """`taskdsl check` keeps thousands of documents to the end: their models must not all stay."""
    settings = Settings()
    documents = [parse(TEXT.replace("rivers", f"river {i}")) for i in range(3 * semantics.MODELS_KEPT)]
    for doc in documents:
        check_document(doc, settings=settings)
    assert len(semantics._models) <= semantics.MODELS_KEPT
    last = documents[-1]
    assert semantics.model_of(last, settings) is semantics.model_of(last, settings)
