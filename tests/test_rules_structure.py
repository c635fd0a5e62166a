"""TD201–TD210: each rule fires where it should, stays silent where it should not, fixes re-check clean."""

from _rulehelp import apply_fix, check, codes, dedent, found, where
from taskdsl.language.diagnostics import Severity

OK_SEQ = dedent("""
    <task type="sequential">
      <description>Two steps</description>
      <steps>
        <task><description>a</description></task>
        <task><description>b</description></task>
      </steps>
    </task>
""")


def test_td201_steps_on_atomic():
    text = dedent("""
        <task>
          <description>Summarise</description>
          <steps><task><description>a</description></task></steps>
        </task>
    """)
    result, [d] = found(text, "TD201")
    assert d.severity is Severity.ERROR
    assert where(result, d) == (3, 4, "steps")
    assert d.message == ("<steps> belongs to a sequential task, but this <task> is type 'atomic': "
                         "set type=\"sequential\" or remove <steps>")


def test_td201_sequential_without_steps_and_empty_steps():
    result, [d] = found('<task type="sequential">\n  <description>x</description>\n</task>\n', "TD201")
    assert where(result, d) == (1, 2, "task")
    assert d.message == "sequential task has no <steps>: add <steps> with one or more <task>, <call> or <cond>"
    text = '<task type="sequential">\n  <description>x</description>\n  <steps>\n    <!-- later -->\n  </steps>\n</task>\n'
    result, [d] = found(text, "TD201")
    assert where(result, d) == (3, 4, "steps")
    assert d.message == "<steps> holds no step: add one or more <task>, <call> or <cond>"
    assert "TD102" not in codes(result)  # the schema's "required child missing" is explained by TD201


def test_td201_silent_on_valid_sequential():
    assert check(OK_SEQ).diagnostics == []


def test_td202_reduce_missing_parts_and_reduce_only_elsewhere():
    text = dedent("""
        <task type="reduce">
          <description>Sum</description>
          <inputs><input name="a">1</input></inputs>
        </task>
    """)
    result, [d] = found(text, "TD202")
    assert where(result, d) == (1, 2, "task")
    assert d.message == ("reduce task lacks <inner_task> and <reduction_task>: "
                         "a reduce needs <inputs>, <inner_task> and <reduction_task>")
    text = dedent("""
        <task>
          <description>Sum</description>
          <initial_value>0</initial_value>
        </task>
    """)
    result, [d] = found(text, "TD202")
    assert where(result, d) == (3, 4, "initial_value")
    assert d.message == ("<initial_value> belongs to a reduce task, but this <task> is type 'atomic': "
                         "set type=\"reduce\" or remove <initial_value>")


def test_td202_silent_on_canonical_reduce():
    text = dedent("""
        <task type="reduce">
          <description>Sum</description>
          <initial_value>0</initial_value>
          <inputs><input name="a">1</input><input name="b">2</input></inputs>
          <inner_task><description>Parse {{current_data}}</description></inner_task>
          <reduction_task><description>Add {{current_result}} to {{accumulator}}</description></reduction_task>
        </task>
    """)
    assert check(text).diagnostics == []


def test_td203_script_without_command_and_command_elsewhere():
    result, [d] = found('<task type="script">\n  <description>ls</description>\n</task>\n', "TD203")
    assert where(result, d) == (1, 2, "task")
    assert d.message == "script task has no <command>: add <command> with the shell command to run"
    result, [d] = found('<task>\n  <description>ls</description>\n  <command>ls</command>\n</task>\n', "TD203")
    assert where(result, d) == (3, 4, "command")
    assert check('<task type="script">\n  <description>ls</description>\n  <command>ls</command>\n</task>\n').diagnostics == []


def test_td204_atomic_without_prompt():
    result, [d] = found("<task>\n  <model>gpt-4o-mini</model>\n</task>\n", "TD204")
    assert (d.severity, where(result, d)) == (Severity.ERROR, (1, 2, "task"))
    assert d.message == "atomic <task> has neither <description> nor <instructions>: add the prompt text"
    assert check("<task>\n  <instructions>Do it</instructions>\n</task>\n").diagnostics == []


def test_td205_ref_with_body():
    text = dedent("""
        <task type="sequential">
          <description>x</description>
          <steps>
            <task ref="summarise">
              <description>Summarise</description>
              <inputs><input name="text">hello</input></inputs>
            </task>
          </steps>
        </task>
    """)
    result, found_ = found(text, "TD205")
    assert len(found_) == 1
    assert where(result, found_[0]) == (5, 8, "description")
    assert found_[0].message == ('<description> is not allowed in a ref task: <task ref="summarise"> takes only '
                                 "<inputs> and <context_management> (the body is defined by the referenced task)")
    result, none = found(text.replace("      <description>Summarise</description>\n", ""), "TD205")
    assert none == []


def test_td206_cond_parts():
    text = dedent("""
        <cond>
          <case>
            <task><description>ok</description></task>
          </case>
          <case test="output.ok == true"/>
        </cond>
    """)
    result, ds = found(text, "TD206")
    assert [(where(result, d)[:2], d.message) for d in ds] == [
        ((2, 4), '<case> has no test: add test="…" (an expression over output, e.g. output.ok == true)'),
        ((5, 4), "<case> has no task: add one <task> or <call> to run when the test holds"),
    ]
    assert not {"TD102", "TD104"} & set(codes(result))
    result, [d] = found("<cond>\n</cond>\n", "TD206")
    assert where(result, d) == (1, 2, "cond")
    assert check(dedent("""
        <cond>
          <case test="output.ok == true"><task><description>ok</description></task></case>
          <default><task><description>no</description></task></default>
        </cond>
    """)).diagnostics == []


def test_td207_template_name_and_params():
    text = '<template name="analyze data" params="dataset, config,dataset,2x">\n  <task><description>{{dataset}}</description></task>\n</template>\n'
    result, ds = found(text, "TD207")
    assert [(where(result, d), d.message) for d in ds] == [
        ((1, 17, "analyze data"), "template name 'analyze data' is not an identifier: use letters, digits and '_' (e.g. 'analyze_data')"),
        ((1, 55, "dataset"), "param 'dataset' is declared twice: remove the repeated one"),
        ((1, 63, "2x"), "param '2x' is not an identifier: params are names ([A-Za-z_][A-Za-z0-9_]*) separated by commas and/or spaces"),
    ]
    assert ds[1].related[0].span.start == text.index("dataset,")
    assert "TD105" not in codes(result)
    fixed = apply_fix(text, ds[0])
    assert fixed.startswith('<template name="analyze_data" ')
    result, none = found('<template name="analyze_data" params="dataset, config">\n  <task><description>{{dataset}} {{config}}</description></task>\n</template>\n', "TD207")
    assert none == [] and result.diagnostics == []


def test_td208_director_evaluator_loop_replaces_td105():
    text = '<task type="director_evaluator_loop">\n  <description>loop</description>\n</task>\n'
    result, [d] = found(text, "TD208")
    assert where(result, d) == (1, 13, "director_evaluator_loop")
    assert d.message == ("type 'director_evaluator_loop' is not supported in version 1: write the loop as a "
                         "sequential whose steps are the director task, a script step (type=\"script\") that "
                         "evaluates, and the evaluator task")
    assert "TD105" not in codes(result)
    result, [d] = found('<task type="composite">\n  <description>x</description>\n</task>\n', "TD208")
    assert d.message == "type 'composite' is not supported in version 1: use atomic, sequential, reduce or script"
    # a typo of a real type is left to the schema's TD105 (which lists the values)
    result, none = found('<task type="sequentail">\n  <description>x</description>\n</task>\n', "TD208")
    assert none == [] and "TD105" in codes(result)


def test_td209_call_task_attribute_fix():
    text = '<call task="validate_input">\n  <arg>user_input</arg>\n</call>\n'
    result, [d] = found(text, "TD209")
    assert where(result, d) == (1, 2, "call task")
    assert d.message == 'legacy <call task="validate_input">: version 1 writes <call template="validate_input">'
    assert not {"TD103", "TD104"} & set(codes(result))
    fixed = apply_fix(text, d)
    assert fixed == '<call template="validate_input">\n  <arg>user_input</arg>\n</call>\n'
    assert [c for c in codes(check(fixed)) if c.startswith(("TD1", "TD2"))] == []


def test_td210_task_parameters_wrapped_in_template():
    text = dedent("""
        <!-- keep me -->
        <task name="validate_input" type="atomic" parameters="data,rules" returns="object">
          <description>Validate {{data}} against {{rules}}</description>
        </task>
    """)
    result, [d] = found(text, "TD210")
    assert where(result, d)[:2] == (2, 2)
    assert d.message == ('legacy <task name= parameters="data,rules">: version 1 declares a function as '
                         '<template name="validate_input" params="data,rules"> around the task')
    assert "TD103" not in codes(result)
    fixed = apply_fix(text, d)
    assert fixed == dedent("""
        <!-- keep me -->
        <template name="validate_input" params="data,rules" returns="object">
        <task type="atomic">
          <description>Validate {{data}} against {{rules}}</description>
        </task>
        </template>
    """)
    assert check(fixed).diagnostics == []


def test_a_name_that_starts_with_a_line_break_is_quoted_on_one_line():
    from taskdsl.rules.checker import check_text
    text = '<template name="\r\ntranslate">\n  <task type="atomic"><instructions>x</instructions></task>\n</template>\n'
    [message] = [d.message for d in check_text(text).diagnostics if d.code == "TD207"]
    # the CR LF is read as one LF (XML line-end normalisation), then quoted as its escape
    assert message == ("template name '\\ntranslate' is not an identifier: use letters, digits and '_' "
                       "(e.g. 'translate')")
