"""taskdsl.rules.fixer.apply_safe_fixes: every safe fix, nothing else changed, stable when re-run."""

from _rulehelp import check, dedent
from taskdsl.rules.fixer import apply_safe_fixes

TEXT = dedent("""
    <!-- a comment   with  odd spacing -->
    <task type="sequential">
        <description>Mixed <![CDATA[<raw> & text]]></description>
        <context_management>
            <inherit_context>false</inherit_context>      <!-- legacy -->
            <accumulation_format>full</accumulation_format>
            <fresh_context>enabled</fresh_context>
        </context_management>
        <steps>
            <call task="helper"><arg>x</arg></call>
        </steps>
    </task>
""")


def test_applies_every_safe_fix_and_keeps_the_rest_byte_for_byte():
    fixed, applied = apply_safe_fixes(TEXT)
    assert sorted(d.code for d, _ in applied) == ["TD209", "TD305", "TD306"]
    assert fixed == (TEXT.replace(">false<", ">none<").replace(">full<", ">full_output<")
                     .replace('<call task="helper">', '<call template="helper">'))
    again, nothing = apply_safe_fixes(fixed)
    assert (again, nothing) == (fixed, [])


def test_unsafe_fixes_are_not_applied():
    text = "<task type='sequential'>\n  <description>x</description>\n  <context_management><fresh_context>enabled</fresh_context></context_management>\n  <steps><task><description>a</description></task></steps>\n</task>\n"
    assert [d.code for d in check(text).diagnostics] == ["TD301"]
    assert apply_safe_fixes(text) == (text, [])
