"""taskdsl.meaning.context: the SPEC §4 defaults table, merging, legacy reading, describe()."""

from _rulehelp import dedent
from taskdsl.meaning.context import OPERATOR_DEFAULTS, describe, effective_settings_map
from taskdsl.language.document import parse


def settings_of(text: str):
    doc = parse(text)
    return doc, effective_settings_map(doc)


def test_defaults_table_is_spec_section_4():
    table = {key: (d.inherit_context, d.accumulate_data, d.accumulation_format, d.fresh_context)
             for key, d in OPERATOR_DEFAULTS.items()}
    assert table == {
        "atomic": ("full", None, None, "disabled"),
        "atomic.subtask": ("none", None, None, "enabled"),
        "sequential": ("full", True, "notes_only", "disabled"),
        "reduce": ("none", None, None, "enabled"),
        "reduce.inner_task": ("full", None, None, "disabled"),
        "reduce.reduction_task": ("full", None, None, "disabled"),
        "script": ("full", None, None, "disabled"),
    }


def test_every_task_like_element_gets_its_operator_defaults():
    doc, effective = settings_of(dedent("""
        <task type="reduce">
          <description>r</description>
          <inputs><input name="a"><task subtype="subtask"><description>s</description></task></input></inputs>
          <inner_task><description>i</description></inner_task>
          <reduction_task type="script"><command>cat</command></reduction_task>
        </task>
    """))
    assert [(e.tag, s.operator, s.inherit_context, s.fresh_context, s.explicit) for e, s in effective.items()] == [
        ("task", "reduce", "none", "enabled", frozenset()),
        ("task", "atomic.subtask", "none", "enabled", frozenset()),
        ("inner_task", "reduce.inner_task", "full", "disabled", frozenset()),
        ("reduction_task", "reduce.reduction_task", "full", "disabled", frozenset()),
    ]


def test_explicit_settings_override_and_legacy_values_are_mapped():
    doc, effective = settings_of(dedent("""
        <task type="sequential">
          <context_management>
            <inherit_context> false </inherit_context>
            <accumulation_format>full</accumulation_format>
            <fresh_context>bogus</fresh_context>
          </context_management>
        </task>
    """))
    [s] = effective.values()
    assert (s.inherit_context, s.accumulate_data, s.accumulation_format, s.fresh_context) == ("none", True, "full_output", "disabled")
    assert s.explicit == {"inherit_context", "accumulation_format"}  # the bogus value falls back to the default
    assert s.legacy == {"inherit_context", "accumulation_format"}
    assert s.elements["inherit_context"].tag == "inherit_context"


def test_setting_directly_under_the_task_is_read():
    _, effective = settings_of("<task type='sequential'><inherit_context>false</inherit_context></task>")
    [s] = effective.values()
    assert s.inherit_context == "none" and "inherit_context" in s.explicit


def test_describe():
    _, effective = settings_of("<task><description>x</description></task>")
    assert describe(next(iter(effective.values()))) == "inherit: full · fresh: disabled (defaults)"
    _, effective = settings_of(dedent("""
        <task type="sequential">
          <context_management><inherit_context>none</inherit_context></context_management>
        </task>
    """))
    assert describe(next(iter(effective.values()))) == (
        "inherit: none · accumulate: true (default) · format: notes_only (default) · fresh: disabled (default)")
    _, effective = settings_of("<task type='sequential'><context_management><accumulate_data>false</accumulate_data></context_management></task>")
    assert describe(next(iter(effective.values()))) == "inherit: full (default) · accumulate: false · fresh: disabled (default)"
