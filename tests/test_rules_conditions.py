"""TD701–TD703: cond tests parsed by the expression language, positions inside the attribute value."""

from _rulehelp import check, dedent, found, where
from taskdsl.language.diagnostics import Severity


def cond(test: str) -> str:
    return f'<cond>\n  <case test="{test}">\n    <task><description>ok</description></task>\n  </case>\n</cond>\n'


def test_td701_position_of_the_syntax_error():
    result, [d] = found(cond("output.valid == "), "TD701")
    assert d.severity is Severity.ERROR
    # the test ends too early: its last character is underlined
    assert where(result, d) == (2, 30, " ")
    assert d.span.end == result.document.text.index('">')
    assert d.message.startswith("cond test does not parse: expected a value")
    result, [d] = found(cond("$.valid == true"), "TD701")
    assert where(result, d) == (2, 15, "$")
    assert d.message == "cond test does not parse: unexpected character '$'"


def test_td701_entities_in_the_value_are_mapped_to_source_positions():
    result, [d] = found(cond("output.a &lt; 3 $"), "TD701")
    assert where(result, d) == (2, 31, "$")


def test_td702_forbidden_names_and_calls():
    result, [d] = found(cond("output.ok and __import__('os')"), "TD702")
    assert (d.severity, where(result, d)) == (Severity.ERROR, (2, 29, "__import__"))
    assert d.message == "'__import__(…)' is not available in a cond test: the only call is len(…)"
    result, [d] = found(cond("status == 1"), "TD702")
    assert where(result, d) == (2, 15, "status")
    assert d.message == "'status' is not available in a cond test: only `output` is"


def test_td702_a_placeholder_in_a_cond_test_says_the_test_sees_only_output():
    result, [d] = found(cond("output.words &gt; {{limit}}"), "TD702")
    assert where(result, d) == (2, 33, "{{")
    assert d.message == ("{{…}} is not filled in inside a cond test, which sees only `output`: to compare with an input, "
                         "have the tested step put it in its JSON output and test output.<name>, or compare in a "
                         "script step")


def test_td701_td702_silent_on_the_language():
    for test in ("output.valid == true", "len(output.errors) &gt; 0 and not output.ok",
                 "'x' in output.tags or output[&quot;k&quot;] != null", "output.items[0].n &lt;= 2.5"):
        assert check(cond(test)).diagnostics == [], test


SEQ = dedent("""
    <task type="sequential">
      <description>x</description>
      <steps>
        <task>
          <description>Check</description>
          OUTPUT
        </task>
        <cond>
          <case test="output.ok == true"><task><description>fine</description></task></case>
        </cond>
      </steps>
    </task>
""")


def test_td703_previous_step_without_json_output():
    text = SEQ.replace("      OUTPUT\n", "")
    result, [d] = found(text, "TD703")
    assert (d.severity, where(result, d)) == (Severity.WARNING, (7, 6, "cond"))
    assert d.message == ('this cond tests the output of the <task> before it as JSON, which that task does not '
                         'declare (<output_format type="json"/>): the run fails only if the output does not parse '
                         'as JSON; add the declaration to that task')
    assert result.document.position(d.related[0].span.start) == (3, 5)
    fixed = SEQ.replace("OUTPUT", '<output_format type="json"/>')
    assert check(fixed).diagnostics == []
    # an xml answer is read into fields, which a cond tests as it tests a JSON object
    assert check(SEQ.replace("OUTPUT", '<output_format type="xml"/>')).diagnostics == []
    # at top level a cond tests last_output: nothing to check
    assert found(cond("output.ok"), "TD703")[1] == []


def test_a_misspelt_output_gets_an_unsafe_fix_to_output():
    from taskdsl.rules.checker import check_text

    text = '<task type="sequential"><description>d</description><steps><task type="script"><description>s</description><command>echo {}</command><output_format type="json"/></task><cond><case test="outptu.n == 1"><task><description>x</description></task></case></cond></steps></task>'
    found = [d for d in check_text(text).diagnostics if d.code == "TD702"]
    assert [d.message for d in found] == ["'outptu' is not available in a cond test: only `output` is; did you mean 'output'?"]
    from taskdsl.language.diagnostics import apply_edits

    assert [f.safe for f in found[0].fixes] == [False]
    assert 'test="output.n == 1"' in apply_edits(text, found[0].fixes[0].edits)
