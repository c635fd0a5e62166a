"""The model's small value objects set their slots directly (for speed): they must stay what the
generated dataclass made them — every field set, immutable, equal and hashable by value."""

import dataclasses

import pytest

from taskdsl.meaning.context import ContextSettings, effective_settings
from taskdsl.language.document import parse
from taskdsl.meaning.scope import Binding
from taskdsl.meaning.model import VariableUse


def test_binding_sets_every_field_and_stays_frozen():
    binding = Binding("input", "x")
    assert (binding.kind, binding.name, binding.element, binding.attr, binding.span) == ("input", "x", None, None, None)
    assert binding == Binding("input", "x") and hash(binding) == hash(Binding("input", "x"))
    assert binding != Binding("param", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        binding.name = "y"


def test_variable_use_sets_every_field_and_stays_frozen():
    use = VariableUse(None, "n", None, "var")
    assert (use.element, use.name, use.span, use.kind) == (None, "n", None, "var")
    with pytest.raises(dataclasses.FrozenInstanceError):
        use.kind = "cond"


def test_context_settings_read_from_a_task_are_complete_and_frozen():
    doc = parse('<task type="sequential"><context_management><inherit_context>false</inherit_context>'
                '</context_management><steps/></task>')
    settings = effective_settings(doc.roots[0])
    assert (settings.operator, settings.inherit_context, settings.accumulate_data,
            settings.accumulation_format, settings.fresh_context) == ("sequential", "none", True, "notes_only", "disabled")
    assert settings.explicit == {"inherit_context"} and settings.legacy == {"inherit_context"}
    assert settings.elements["inherit_context"].tag == "inherit_context"
    plain = ContextSettings("atomic", "full", None, None, "disabled")
    assert (plain.explicit, plain.elements, plain.legacy) == (frozenset(), {}, frozenset())
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.inherit_context = "full"
