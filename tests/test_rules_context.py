"""TD301–TD307 over effective settings; legacy values replace the schema's TD105."""

from _rulehelp import apply_fix, check, codes, dedent, found, where
from taskdsl.language.diagnostics import Severity
from taskdsl.rules.fixer import apply_safe_fixes


def test_td301_explicit_fresh_with_default_inherit_of_sequential():
    text = dedent("""
        <task type="sequential">
          <description>x</description>
          <context_management>
            <fresh_context>enabled</fresh_context>
          </context_management>
          <steps><task><description>a</description></task></steps>
        </task>
    """)
    result, [d] = found(text, "TD301")
    assert d.severity is Severity.ERROR
    assert where(result, d) == (4, 20, "enabled")
    assert d.message == ("fresh_context=enabled cannot be combined with inherit_context=full (default for "
                         "sequential): set inherit_context to none or fresh_context to disabled")
    # fresh_context was written, inherit_context is the default: the first fix (what --unsafe-fixes
    # applies) keeps what the author wrote and sets the other
    assert [f.title for f in d.fixes] == ["Set inherit_context to none", "Set fresh_context to disabled"]
    assert not any(f.safe for f in d.fixes)
    first = apply_fix(text, d, 0)
    assert "    <inherit_context>none</inherit_context>\n  </context_management>" in first
    assert "<fresh_context>enabled</fresh_context>" in first
    assert check(first).diagnostics == []
    assert check(apply_fix(text, d, 1)).diagnostics == []


def test_td301_default_fresh_of_reduce_with_explicit_subset_points_at_task_and_relates_inherit():
    text = dedent("""
        <task type="reduce">
          <description>Sum</description>
          <context_management>
            <inherit_context>subset</inherit_context>
          </context_management>
          <inputs><input name="a">1</input></inputs>
          <inner_task><description>Parse {{current_data}}</description></inner_task>
          <reduction_task><description>Add {{current_result}}</description></reduction_task>
        </task>
    """)
    result, [d] = found(text, "TD301")
    assert where(result, d) == (1, 2, "task")
    assert d.message == ("fresh_context=enabled (default for reduce) cannot be combined with "
                         "inherit_context=subset: set inherit_context to none or fresh_context to disabled")
    assert d.related[0].message == "inherit_context is set to subset here"
    assert result.document.text[d.related[0].span.start:d.related[0].span.end] == "subset"


def test_td301_silent_when_exclusive():
    for inherit, fresh in (("none", "enabled"), ("full", "disabled"), ("subset", "disabled")):
        text = (f"<task>\n  <description>x</description>\n  <inputs><input name='a'>1</input></inputs>\n"
                f"  <context_management>\n    <inherit_context>{inherit}</inherit_context>\n"
                f"    <fresh_context>{fresh}</fresh_context>\n  </context_management>\n</task>\n")
        assert check(text).diagnostics == [], (inherit, fresh)
    # the atomic subtask subtype defaults to none + enabled: fine
    assert check('<task subtype="subtask">\n  <description>x</description>\n</task>\n').diagnostics == []


NO_CONTEXT = dedent("""
    <task type="atomic">
      <description>Alone</description>
      <context_management>
        <inherit_context>none</inherit_context>
        <fresh_context>disabled</fresh_context>
      </context_management>
    </task>
""")


def test_td302_no_context_at_all():
    result, [d] = found(NO_CONTEXT, "TD302")
    assert d.severity is Severity.WARNING
    assert where(result, d) == (1, 2, "task")
    assert d.message == ("task has no context at all (inherit_context=none, no accumulation, fresh_context=disabled, "
                         "no file_paths, no inputs): enable fresh_context, inherit context, or give it inputs or file_paths")
    assert [r.message for r in d.related] == ["inherit_context is set to none here", "fresh_context is set to disabled here"]


def test_td302_silent_with_file_paths_inputs_or_accumulation():
    with_paths = NO_CONTEXT.replace("</context_management>", "</context_management>\n  <file_paths><path>a.py</path></file_paths>")
    assert found(with_paths, "TD302")[1] == []
    with_inputs = NO_CONTEXT.replace("</context_management>", "</context_management>\n  <inputs><input name='a'>1</input></inputs>")
    assert found(with_inputs, "TD302")[1] == []
    accumulating = dedent("""
        <task type="sequential">
          <description>x</description>
          <context_management>
            <inherit_context>subset</inherit_context>
            <accumulate_data>true</accumulate_data>
          </context_management>
          <steps><task><description>a</description></task></steps>
        </task>
    """)
    assert check(accumulating).diagnostics == []


def test_td303_error_on_reduce_warning_on_atomic_and_false_is_fine():
    reduce = dedent("""
        <task type="reduce">
          <description>Sum</description>
          <context_management>
            <accumulate_data>true</accumulate_data>
          </context_management>
          <inputs><input name="a">1</input></inputs>
          <inner_task><description>Parse {{current_data}}</description></inner_task>
          <reduction_task><description>Add {{current_result}}</description></reduction_task>
        </task>
    """)
    result, [d] = found(reduce, "TD303")
    assert (d.severity, where(result, d)) == (Severity.ERROR, (4, 6, "accumulate_data"))
    assert d.message == ("<accumulate_data> has no effect on this reduce task: only a sequential accumulates "
                         "step outputs; remove it")
    fixed = apply_fix(reduce, d)
    assert "accumulate_data" not in fixed and "  <context_management>\n  </context_management>" in fixed
    assert found(fixed, "TD303")[1] == []
    atomic = "<task>\n  <description>x</description>\n  <context_management>\n    <accumulation_format>notes_only</accumulation_format>\n  </context_management>\n</task>\n"
    result, [d] = found(atomic, "TD303")
    assert (d.severity, where(result, d)) == (Severity.WARNING, (4, 6, "accumulation_format"))
    explicit_false = "<task>\n  <description>x</description>\n  <context_management>\n    <accumulate_data>false</accumulate_data>\n  </context_management>\n</task>\n"
    assert check(explicit_false).diagnostics == []


def test_td304_format_without_accumulation():
    text = dedent("""
        <task type="sequential">
          <description>x</description>
          <context_management>
            <accumulate_data>false</accumulate_data>
            <accumulation_format>full_output</accumulation_format>
          </context_management>
          <steps><task><description>a</description></task></steps>
        </task>
    """)
    result, [d] = found(text, "TD304")
    assert (d.severity, where(result, d)) == (Severity.WARNING, (5, 6, "accumulation_format"))
    assert d.message == ("<accumulation_format> has no effect: accumulate_data is false; set accumulate_data to "
                         "true or remove accumulation_format")
    assert check(apply_fix(text, d)).diagnostics == []
    assert found(text.replace("false", "true"), "TD304")[1] == []


LEGACY = dedent("""
    <task type="sequential">
      <description>x</description>
      <context_management>
        <inherit_context>false</inherit_context>
        <accumulate_data>true</accumulate_data>
        <accumulation_format>minimal</accumulation_format>
      </context_management>
      <steps><task><description>a</description></task></steps>
    </task>
""")


def test_td305_td306_legacy_values_replace_td105_and_fix():
    result = check(LEGACY)
    assert codes(result) == ["TD305", "TD306"]
    d305, d306 = result.diagnostics
    assert where(result, d305) == (4, 22, "false")
    assert d305.message == "legacy inherit_context value 'false': version 1 writes 'none'"
    assert where(result, d306) == (6, 26, "minimal")
    assert d306.message == "legacy accumulation_format value 'minimal': version 1 writes 'notes_only'"
    assert all(f.safe for d in (d305, d306) for f in d.fixes)
    fixed, applied = apply_safe_fixes(LEGACY)
    assert [d.code for d, _ in applied] == ["TD305", "TD306"]
    assert fixed == LEGACY.replace(">false<", ">none<").replace(">minimal<", ">notes_only<")
    assert check(fixed).diagnostics == []


def test_td305_true_means_full():
    text = LEGACY.replace(">false<", ">true<")
    result, [d] = found(text, "TD305")
    assert d.message == "legacy inherit_context value 'true': version 1 writes 'full'"
    assert apply_fix(text, d).count("<inherit_context>full</inherit_context>") == 1


def test_td307_setting_directly_under_task_is_moved():
    text = dedent("""
        <task type="sequential">
            <description>Overall sequence description</description>
            <inherit_context>true</inherit_context>
            <steps>
                <task><description>a</description></task>
            </steps>
        </task>
    """)
    result = check(text)
    assert codes(result) == ["TD307"]  # the schema's TD101 is explained by TD307
    d = result.diagnostics[0]
    assert where(result, d) == (3, 6, "inherit_context")
    assert d.message == ("<inherit_context> belongs inside <context_management> (legacy value 'true' means 'full'): "
                         "move it there")
    fixed, applied = apply_safe_fixes(text)
    assert fixed == text.replace(
        "    <inherit_context>true</inherit_context>\n",
        "    <context_management>\n        <inherit_context>full</inherit_context>\n    </context_management>\n")
    assert check(fixed).diagnostics == []


def test_td307_into_an_existing_block():
    text = dedent("""
        <task>
          <description>x</description>
          <context_management>
            <inherit_context>none</inherit_context>
          </context_management>
          <fresh_context>enabled</fresh_context>
        </task>
    """)
    fixed, applied = apply_safe_fixes(text)
    assert [d.code for d, _ in applied] == ["TD307"]
    assert fixed == dedent("""
        <task>
          <description>x</description>
          <context_management>
            <inherit_context>none</inherit_context>
            <fresh_context>enabled</fresh_context>
          </context_management>
        </task>
    """)
    assert check(fixed).diagnostics == []
