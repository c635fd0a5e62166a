"""Completion that knows the library and the task: params not yet bound for `<arg name>` and a
ref's `<input name>`, `output.` fields in a cond test, children filtered by the task's type,
models in order of likelihood."""

from __future__ import annotations

import pytest

from taskdsl.language.document import parse
from taskdsl.features import completion
from taskdsl.features.util import Positions
from taskdsl.library import Library
from taskdsl.project.settings import Settings

LIB = {
    "lib.task.xml": '<library>\n'
                    '  <template name="analyze" params="data, config, style"><task><description>{{data}}</description></task></template>\n'
                    '  <task name="summarize">\n    <description>Summarize {{text}}</description>\n'
                    '    <inputs><input name="text"/><input name="tone">neutral</input></inputs>\n  </task>\n'
                    '</library>\n',
}


@pytest.fixture
def library(tmp_path):
    for name, text in LIB.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return Library.from_paths([tmp_path])


def labels(marked: str, library=None, settings=None, details=False):
    offset = marked.index("|")
    text = marked[:offset] + marked[offset + 1:]
    doc = parse(text)
    items = completion.complete(doc, offset, Positions(doc), library=library, settings=settings).items
    items.sort(key=lambda item: item.sort_text or item.label)
    return [(i.label, i.detail) for i in items] if details else [i.label for i in items]


def test_arg_names_are_the_params_not_yet_bound(library):
    # one positional arg binds `data`; `style` is bound by name: only `config` is left
    text = '<call template="analyze">\n  <arg>x</arg>\n  <arg name="style">s</arg>\n  <arg name="|"/>\n</call>'
    assert labels(text, library) == ["config"]
    assert labels('<call template="analyze"><arg name="|"/></call>', library) == ["data", "config", "style"]
    # the arg being edited does not count as bound
    assert labels('<call template="analyze"><arg name="con|fig"/></call>', library) == ["data", "config", "style"]
    assert labels('<call template="nowhere"><arg name="|"/></call>', library) == []


def test_ref_input_names_are_the_targets_params_required_first(library):
    text = '<task ref="summarize">\n  <inputs><input name="|"/></inputs>\n</task>'
    assert labels(text, library, details=True) == [
        ("text", "required · param of summarize"), ("tone", "default: neutral · param of summarize")]
    text = '<task ref="summarize">\n  <inputs><input name="tone">x</input><input name="|"/></inputs>\n</task>'
    assert labels(text, library) == ["text"]
    # an <input> of a task that is not a ref declares a new name: nothing to offer
    assert labels('<task>\n  <inputs><input name="|"/></inputs>\n</task>', library) == []


COND = '''<task type="sequential">
  <steps>
    <task>
      <description>Check the file. Answer as JSON: {"valid": true, "errors": 0}</description>
      <output_format type="json" schema="object"/>
    </task>
    <cond>
      <case test="output.|"><task><description>ok</description></task></case>
      <case test="output.retries &gt; 2"><task><description>no</description></task></case>
    </cond>
  </steps>
</task>'''


def test_output_fields_from_the_tested_prompt_and_the_other_cases():
    assert labels(COND, details=True) == [
        ("valid", "in the prompt of the tested <task>"), ("errors", "in the prompt of the tested <task>"),
        ("retries", "tested by another case")]
    assert labels(COND.replace("output.|", "output.va|")) == ["valid", "errors", "retries"]  # client filters
    # an array output has no fields
    assert labels(COND.replace('schema="object"', 'schema="string[]"')) == []
    # not after `output.`: nothing
    assert labels(COND.replace("output.|", "len(|")) == []


def test_children_are_filtered_by_the_task_type():
    atomic = labels("<task>\n  <description>x</description>\n  <|\n</task>")
    assert "steps" not in atomic and "command" not in atomic and "inner_task" not in atomic
    assert "instructions" in atomic and "output_format" in atomic
    sequential = labels('<task type="sequential">\n  <|\n</task>')
    assert "steps" in sequential and "command" not in sequential and "reduction_task" not in sequential
    script = labels('<task type="script">\n  <|\n</task>')
    assert "command" in script and "steps" not in script
    reduce = labels('<task type="reduce">\n  <|\n</task>')
    assert {"initial_value", "inner_task", "reduction_task"} <= set(reduce) and "steps" not in reduce
    assert sorted(labels('<task ref="x">\n  <|\n</task>')) == ["context_management", "inputs"]
    # a type version 1 does not know: everything the grammar allows
    unknown = labels('<task type="function">\n  <|\n</task>')
    assert "steps" in unknown and "command" in unknown


def test_models_default_and_workspace_first_then_popular(tmp_path):
    (tmp_path / "a.task.xml").write_text("<task><description>x</description><model>ollama/llama3</model></task>",
                                         encoding="utf-8")
    (tmp_path / "b.task.xml").write_text("<task><description>x</description><model> ollama/llama3 </model></task>",
                                         encoding="utf-8")
    library = Library.from_paths([tmp_path])
    found = labels("<task><model>|</model></task>", library, Settings(model="gpt-4o-mini"))
    assert found[:2] == ["gpt-4o-mini", "ollama/llama3"]
    rank = completion.model_rank([])
    popular = [name for name in found[2:] if rank(name)[0] == 1]
    assert found[2:2 + len(popular)] == popular and popular  # the popular current models come next
    assert "claude-sonnet-4-5" in popular and "claude-sonnet-4-5-20250929" not in popular
    # the built-in default model leads when nothing is configured
    assert labels("<task><model>|</model></task>", None, Settings())[0] == "taskdsl/echo"


# -- hover ----------------------------------------------------------------------------------------

from taskdsl.features import hover  # noqa: E402


def hover_text(marked: str, library=None, markdown=False):
    offset = marked.index("|")
    text = marked[:offset] + marked[offset + 1:]
    found = hover.describe_at(parse(text), offset, markdown, library)
    return found[0] if found else None


def test_hover_on_a_ref_lists_the_targets_params_required_and_defaults(library):
    text = hover_text('<task ref="summ|arize"/>', library)
    assert text.splitlines()[:4] == ["summarize", "", "task · atomic", ""]
    assert "  text: required\n  tone: default neutral" in text
    markdown = hover_text('<task ref="summ|arize"/>', library, markdown=True)
    assert "- `text`: required\n- `tone`: default `neutral`" in markdown
    assert "- `data`: required\n- `config`: required\n- `style`: required" in \
        hover_text('<call template="ana|lyze"/>', library, markdown=True)


def test_hover_on_an_input_name_of_a_ref_shows_the_param_it_binds(library):
    text = hover_text('<task ref="summarize"><inputs><input name="to|ne">x</input></inputs></task>', library)
    assert text == "tone\n\nBinds the param of summarize\n\n  tone: default neutral"
    text = hover_text('<task ref="summarize"><inputs><input name="col|our">x</input></inputs></task>', library)
    assert text == "colour\n\nsummarize has no param colour."
    assert hover_text('<call template="analyze"><arg name="da|ta">x</arg></call>', library) == \
        "data\n\nBinds the param of analyze\n\n  data: required"


def test_hover_on_a_variable_shows_its_literal_default():
    text = '<task>\n  <inputs><input name="tone">neutral</input><input name="doc" from="x"/></inputs>\n' \
           '  <description>{{to|ne}} {{doc}}</description>\n</task>'
    assert hover_text(text) == "tone\n\nan input of an enclosing task\n\nDefault: neutral"
    assert "Default" not in hover_text(text.replace("{{to|ne}} {{doc}}", "{{tone}} {{d|oc}}"))
