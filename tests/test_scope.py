"""taskdsl.scope: the names visible at a point, with where each is declared."""

from _rulehelp import dedent
from taskdsl.document import parse
from taskdsl.scope import Scopes, visible_names
from taskdsl.settings import Settings

TEXT = dedent("""
    <task type="sequential">
      <inputs><input name="outer">o</input></inputs>
      <steps>
        <task>
          <description id="d1">step one</description>
          <inputs><input name="mine" from="outer"/></inputs>
        </task>
        <task type="reduce">
          <inputs><input name="xs">1</input></inputs>
          <inner_task>
            <description id="d2">inner</description>
            <inputs><input name="chunk"/></inputs>
          </inner_task>
          <reduction_task><description id="d3">red</description></reduction_task>
        </task>
      </steps>
    </task>
""")


def element(doc, ident):
    return next(e for e in doc.iter() if e.get("id") == ident)


def test_enclosing_inputs_and_builtins():
    doc = parse(TEXT)
    names = visible_names(element(doc, "d1"), Settings(globals=("api",)))
    assert {n: b.kind for n, b in names.items()} == {"mine": "input", "outer": "input", "last_output": "builtin", "api": "global"}
    declared = names["mine"].span
    assert doc.text[declared.start:declared.end] == "mine"


def test_an_input_sees_its_callers_scope_not_its_own_tasks_inputs():
    doc = parse(TEXT)
    item = next(e for e in doc.iter() if e.get("name") == "mine")
    assert set(visible_names(item)) == {"outer", "last_output"}


def test_reduce_bound_names():
    doc = parse(TEXT)
    assert set(visible_names(element(doc, "d2"))) == {"chunk", "current_data", "xs", "outer", "last_output"}
    assert set(visible_names(element(doc, "d3"))) == {"current_result", "accumulator", "original_input", "xs", "outer", "last_output"}


def test_template_sees_only_its_params_and_globals():
    doc = parse('<library><template name="t" params="a, b"><task><description id="d">x</description></task></template></library>')
    names = visible_names(element(doc, "d"), Settings(globals=("g",)))
    assert {n: b.kind for n, b in names.items()} == {"a": "param", "b": "param", "last_output": "builtin", "g": "global"}
    span = names["b"].span
    assert doc.text[span.start:span.end] == "b"


def test_legacy_parameters_are_params():
    doc = parse('<task name="f" parameters="data,rules"><description id="d">x</description></task>')
    assert set(visible_names(element(doc, "d"))) == {"data", "rules", "last_output"}


def test_one_scopes_object_answers_as_visible_names_for_every_element():
    # Scopes shares what each task or template declares between the elements under it; the
    # answers are visible_names' own, bindings and order included, and names() is their keys
    text = ('<library><template name="t" params="a, b"><task type="sequential" parameters="z">'
            '<inputs><input name="a">1</input><input name="c" from="b"/></inputs><steps>'
            '<task type="reduce"><inputs><input name="xs">1</input></inputs>'
            '<inner_task><inputs><input name="chunk"/></inputs><description>{{chunk}}</description></inner_task>'
            '<reduction_task><description>{{accumulator}}</description></reduction_task></task>'
            '</steps></task></template>'
            '<task name="f" parameters="data, rules"><description>{{data}}</description></task></library>')
    doc = parse(text)
    for settings in (None, Settings(globals=("g", "a", "last_output"))):
        scopes = Scopes(settings)
        for item in doc.iter():
            expected = visible_names(item, settings)
            assert list(scopes.visible(item).items()) == list(expected.items())
            assert scopes.names(item) == set(expected)
