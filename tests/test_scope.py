"""taskdsl.meaning.scope: the names visible at a point, with where each is declared."""

from _rulehelp import dedent
from taskdsl.language.document import parse
from taskdsl.meaning.scope import Scopes, visible_names
from taskdsl.project.settings import Settings

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
    assert {n: b.kind for n, b in names.items()} == {"mine": "input", "outer": "input", "api": "global"}
    declared = names["mine"].span
    assert doc.text[declared.start:declared.end] == "mine"


def test_an_input_sees_its_callers_scope_not_its_own_tasks_inputs():
    doc = parse(TEXT)
    item = next(e for e in doc.iter() if e.get("name") == "mine")
    assert set(visible_names(item)) == {"outer"}  # a first step: no last_output yet


def test_reduce_bound_names():
    doc = parse(TEXT)
    # a reduce inherits nothing by default (inherit_context none): its caller's names stop there
    assert set(visible_names(element(doc, "d2"))) == {"chunk", "current_data", "xs"}
    assert set(visible_names(element(doc, "d3"))) == {"current_result", "accumulator", "original_input", "xs"}


def test_template_sees_only_its_params_and_globals():
    doc = parse('<library><template name="t" params="a, b"><task><description id="d">x</description></task></template></library>')
    names = visible_names(element(doc, "d"), Settings(globals=("g",)))
    assert {n: b.kind for n, b in names.items()} == {"a": "param", "b": "param", "g": "global"}
    span = names["b"].span
    assert doc.text[span.start:span.end] == "b"


def test_legacy_parameters_are_params():
    doc = parse('<task name="f" parameters="data,rules"><description id="d">x</description></task>')
    assert set(visible_names(element(doc, "d"))) == {"data", "rules"}


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


LAST = dedent("""
    <task type="sequential">
      <description id="top">{{last_output}}</description>
      <steps>
        <task><description id="s1">first</description></task>
        <task>
          <description id="s2">second</description>
          <inputs><input id="in2" name="x">{{last_output}}</input></inputs>
        </task>
        <task type="sequential">
          <description id="s3">third</description>
          <steps>
            <task><description id="s3a">nested first</description></task>
            <task><description id="cut">x</description>
              <context_management><inherit_context>none</inherit_context></context_management></task>
            <task><description id="sub">x</description><inputs><input name="p" from="last_output"/></inputs>
              <context_management><inherit_context>subset</inherit_context></context_management></task>
          </steps>
        </task>
      </steps>
    </task>
""")


def test_last_output_is_visible_from_the_second_step_on_and_under_inheritance():
    doc = parse(LAST)
    scopes = Scopes()
    seen = {ident: "last_output" in scopes.names(element(doc, ident))
            for ident in ("top", "s1", "s2", "in2", "s3", "s3a", "cut", "sub")}
    assert seen == {"top": False, "s1": False, "s2": True, "in2": True, "s3": True, "s3a": True,
                    "cut": False, "sub": True}
    assert scopes.closed(element(doc, "cut")) and not scopes.closed(element(doc, "s2"))
    assert set(scopes.names(element(doc, "sub"))) == {"p", "last_output"}  # subset: only what `from` names


def test_last_output_at_the_top_of_a_root_cond_only():
    cond = parse('<cond><case test="output.ok"><task><description id="d">{{last_output}}</description></task></case></cond>')
    assert "last_output" in Scopes().names(element(cond, "d"))
    task = parse('<task><description id="d">{{last_output}}</description></task>')
    assert "last_output" not in Scopes().names(element(task, "d"))


def test_reduce_names_are_visible_in_the_inputs_of_its_tasks():
    doc = parse(dedent("""
        <task type="reduce"><inputs><input name="xs">1</input></inputs>
          <inner_task><description>d</description><inputs><input id="i" name="c" from="current_data"/></inputs></inner_task>
          <reduction_task><description>r</description><inputs><input id="r" name="a" from="accumulator"/></inputs></reduction_task>
        </task>"""))
    assert {"current_data"} <= set(Scopes().names(element(doc, "i")))
    assert {"current_result", "accumulator", "original_input"} <= set(Scopes().names(element(doc, "r")))
