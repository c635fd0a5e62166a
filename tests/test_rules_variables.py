"""TD401–TD404: inputs and {{…}} variables against the names in scope."""

from _rulehelp import apply_fix, check, dedent, found, where
from taskdsl.language.diagnostics import Severity
from taskdsl.project.settings import Settings


def test_td401_duplicate_input():
    text = dedent("""
        <task>
          <description>{{data}}</description>
          <inputs>
            <input name="data">a</input>
            <input name="data">b</input>
          </inputs>
        </task>
    """)
    result, [d] = found(text, "TD401")
    assert (d.severity, where(result, d)) == (Severity.ERROR, (5, 18, "data"))
    assert d.message == "input 'data' is declared twice in these <inputs>: rename one of them"
    assert result.document.position(d.related[0].span.start) == (3, 17)
    assert found(text.replace('name="data">b', 'name="config">b'), "TD401")[1] == []


def test_td402_error_inside_template_with_did_you_mean_fix():
    text = '<template name="greet" params="person">\n  <task><description>Hello {{persn}}!</description></task>\n</template>\n'
    result, [d] = found(text, "TD402")
    assert (d.severity, where(result, d)) == (Severity.ERROR, (2, 28, "{{persn}}"))
    assert d.message == ("{{persn}} names nothing visible: template 'greet' sees only its params and globals "
                         "(visible: person); did you mean 'person'?")
    fixed = apply_fix(text, d)
    assert "Hello {{person}}!" in fixed and check(fixed).diagnostics == []


def test_td402_is_an_error_outside_templates_too():
    text = dedent("""
        <task type="sequential">
          <description>Analyse {{dataset}}</description>
          <inputs><input name="dataset">sales.csv</input></inputs>
          <steps>
            <task>
              <description>Load {{dataset}} with {{config}} and {{cfg}}</description>
              <inputs><input name="config">{{dataset}}</input></inputs>
            </task>
            <task><description>Then {{config}} and {{last_output}}</description></task>
          </steps>
        </task>
    """)
    result, ds = found(text, "TD402")
    # {{cfg}} is nothing; the second step does not see the first step's input 'config'
    assert [(where(result, d)[:3], d.severity) for d in ds] == [
        ((6, 57, "{{cfg}}"), Severity.ERROR),
        ((9, 29, "{{config}}"), Severity.ERROR),
    ]
    assert ds[0].message == ("{{cfg}} names nothing visible: nothing here declares it "
                             "(visible: config, dataset)")


def test_td402_globals_and_reduce_bound_names():
    text = "<task>\n  <description>Use {{api_base}}</description>\n</task>\n"
    assert len(found(text, "TD402")[1]) == 1
    assert found(text, "TD402", settings=Settings(globals=("api_base",)))[1] == []
    reduce = dedent("""
        <task type="reduce">
          <description>Sum</description>
          <inputs><input name="a">1</input></inputs>
          <inner_task>
            <description>Parse {{current_data}} ({{chunk}}) not {{accumulator}}</description>
            <inputs><input name="chunk"/></inputs>
          </inner_task>
          <reduction_task><description>Add {{current_result}} to {{accumulator}} from {{original_input}}</description></reduction_task>
        </task>
    """)
    result, ds = found(reduce, "TD402")
    assert [where(result, d)[2] for d in ds] == ["{{accumulator}}"]


def test_td403_from_names_nothing_visible():
    text = dedent("""
        <task type="sequential">
          <description>x</description>
          <inputs><input name="raw">r</input></inputs>
          <steps>
            <task><description>first</description></task>
            <task>
              <description>a</description>
              <inputs>
                <input name="data" from="raw"/>
                <input name="draft" from="previous_step"/>
                <input name="env" from="env:data_source"/>
              </inputs>
            </task>
          </steps>
        </task>
    """)
    result, ds = found(text, "TD403")
    assert [(where(result, d), d.severity) for d in ds] == [
        ((10, 35, "previous_step"), Severity.ERROR),
        ((11, 33, "env:data_source"), Severity.ERROR),
    ]
    assert ds[0].message == 'from="previous_step" names nothing visible here (visible: last_output, raw); did you mean \'last_output\'?'
    assert ds[1].message == ('from="env:data_source" is not a variable name: from names a variable visible here '
                             "(visible: last_output, raw)")
    fixed = apply_fix(text, ds[0])
    assert 'from="last_output"' in fixed and len(found(fixed, "TD403")[1]) == 1


def test_td403_an_input_does_not_see_its_own_tasks_inputs():
    text = dedent("""
        <task type="sequential">
          <description>x</description>
          <steps>
            <task>
              <description>a</description>
              <inputs>
                <input name="a">1</input>
                <input name="b" from="a"/>
              </inputs>
            </task>
          </steps>
        </task>
    """)
    result, [d] = found(text, "TD403")
    assert where(result, d)[2] == "a"


def test_td404_malformed_placeholders():
    text = "<task>\n  <description>Hello {{ user name }} and {{open</description>\n</task>\n"
    result, ds = found(text, "TD404")
    assert [(where(result, d), d.severity) for d in ds] == [
        ((2, 22, "{{ user name }}"), Severity.ERROR),
        ((2, 42, "{{open"), Severity.ERROR),
    ]
    assert ds[0].message.startswith("malformed {{…}}: unexpected 'name' after 'user'")
    assert ds[1].message == "malformed {{…}}: '{{' is never closed: add '}}'"
    assert found("<task>\n  <description>Hello {{user_name}}</description>\n  <inputs><input name='user_name'>x</input></inputs>\n</task>\n", "TD404")[1] == []
