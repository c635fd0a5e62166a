"""Context management rules (TD3xx), over the effective settings of taskdsl.meaning.context.

TD307 is this project's code for the historical placement of a setting directly under the task
(corpus 078): the schema would only say "element not allowed here".
"""

from __future__ import annotations

from taskdsl.meaning.context import FIELDS, LEGACY_VALUES, OPERATOR_DEFAULTS, ContextSettings, read_value, value_span
from taskdsl.language.diagnostics import Fix, Related, Severity, TextEdit
from taskdsl.language.document import Element, Span
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import (
    TASK_TAGS, indent_unit, is_ref, kind, line_indent, make, operators, remove_fix, removal_span, tasks,
)

ACCUMULATION_FIELDS = ("accumulate_data", "accumulation_format")


def _operator_label(settings: ContextSettings) -> str:
    return {"atomic.subtask": "atomic subtask", "reduce.inner_task": "inner_task",
            "reduce.reduction_task": "reduction_task"}.get(settings.operator, settings.operator)


def _how(settings: ContextSettings, name: str) -> str:
    value = settings.value(name)
    text = ("true" if value else "false") if isinstance(value, bool) else value
    if name in settings.explicit:
        return f"{name}={text}"
    return f"{name}={text} (default for {_operator_label(settings)})"


def _block_insert(ctx: RuleContext, task: Element, tag: str, value: str) -> TextEdit | None:
    """An edit adding <tag>value</tag> at the end of the task's <context_management>."""
    block = task.child("context_management")
    if block is None or block.end_tag is None:
        return None
    text = ctx.document.text
    indent = line_indent(text, block.start_tag.start)
    inner = indent + indent_unit(indent)
    line_start = text.rfind("\n", 0, block.end_tag.start) + 1
    if not text[line_start:block.end_tag.start].strip():
        return TextEdit(Span(line_start, line_start), f"{inner}<{tag}>{value}</{tag}>\n")
    return TextEdit(Span(block.end_tag.start, block.end_tag.start), f"<{tag}>{value}</{tag}>")


@rule("TD301", Severity.ERROR, "fresh_context=enabled with inherit_context full or subset",
      what="`fresh_context=enabled` asks the memory system for new context; it cannot be combined with "
           "`inherit_context` `full` or `subset`. Checked on the effective settings: the operator's "
           "defaults count (a sequential inherits `full` unless told otherwise).",
      why="The two sources of context are mutually exclusive by design (ADR: context management "
          "settings): a task either inherits its parent's context or gets a fresh one.",
      bad='<task type="sequential">\n  <context_management>\n    <fresh_context>enabled</fresh_context>\n'
          '  </context_management>\n  …\n</task>',
      good='<task type="sequential">\n  <context_management>\n    <inherit_context>none</inherit_context>\n'
           '    <fresh_context>enabled</fresh_context>\n  </context_management>\n  …\n</task>',
      fix="Set `inherit_context` to `none`, or `fresh_context` to `disabled` (quick fixes; not applied by --fix).",
      tags=TASK_TAGS)
def exclusivity_rule(ctx: RuleContext):
    for task, settings in ctx.effective.items():
        if settings.fresh_context != "enabled" or settings.inherit_context not in ("full", "subset"):
            continue
        if is_ref(task) and not {"inherit_context", "fresh_context"} <= settings.explicit:
            continue  # the target's operator (unknown here) decides the defaults
        fresh = settings.elements.get("fresh_context")
        inherit = settings.elements.get("inherit_context")
        span = value_span(fresh) if fresh is not None else task.name_span
        related = []
        if inherit is not None:
            related.append(Related(f"inherit_context is set to {settings.inherit_context} here", value_span(inherit)))
        fixes = []
        if fresh is not None:
            fixes.append(Fix("Set fresh_context to disabled", (TextEdit(value_span(fresh), "disabled"),), safe=False))
        else:
            edit = _block_insert(ctx, task, "fresh_context", "disabled")
            if edit is not None:
                fixes.append(Fix("Set fresh_context to disabled", (edit,), safe=False))
        if inherit is not None:
            fixes.append(Fix("Set inherit_context to none", (TextEdit(value_span(inherit), "none"),), safe=False))
        else:
            edit = _block_insert(ctx, task, "inherit_context", "none")
            if edit is not None:
                fixes.append(Fix("Set inherit_context to none", (edit,), safe=False))
        if fresh is not None and inherit is None:
            fixes.reverse()  # the author asked for fresh context: the first fix (--unsafe-fixes) keeps it
        yield make("TD301", span,
                   f"{_how(settings, 'fresh_context')} cannot be combined with {_how(settings, 'inherit_context')}: "
                   "set inherit_context to none or fresh_context to disabled",
                   related=related, fixes=fixes)


@rule("TD302", Severity.WARNING, "no context at all",
      what="The task gets no context from anywhere: `inherit_context` is `none`, it does not accumulate, "
           "`fresh_context` is `disabled`, and it has no `file_paths` and no inputs.",
      why="The model would see only the prompt text. Usually one of the settings was meant otherwise. "
          "Inputs, `file_paths`, accumulation (a sequential with `accumulate_data`), inheritance and fresh "
          "context all count as context; the reduce operator's inner and reduction tasks always receive "
          "the current input, and a ref task's context is decided by its target, so neither is checked. A "
          "script is not checked either: its context is its command.",
      bad='<task>\n  <description>Summarise</description>\n  <context_management>\n'
          '    <inherit_context>none</inherit_context>\n    <fresh_context>disabled</fresh_context>\n'
          '  </context_management>\n</task>',
      good='<task>\n  <description>Summarise</description>\n  <context_management>\n'
           '    <inherit_context>none</inherit_context>\n    <fresh_context>enabled</fresh_context>\n'
           '  </context_management>\n</task>',
      fix="Enable `fresh_context`, inherit the parent's context, or give the task inputs or `file_paths`.",
      tags=TASK_TAGS)
def no_context_rule(ctx: RuleContext):
    for task, settings in ctx.effective.items():
        if settings.inherit_context != "none" or settings.accumulates or settings.fresh_context != "disabled":
            continue
        if task.tag != "task" or is_ref(task) or kind(task) in (None, "script"):
            continue
        if task.child("file_paths") is not None:
            continue
        inputs = task.child("inputs")
        if inputs is not None and inputs.children_named("input"):
            continue
        parent = task.parent
        if parent is not None and parent.tag == "template" and (parent.get("params") or "").strip():
            continue  # the template's params are the task's inputs
        if (task.get("parameters") or "").strip():
            continue
        related = [Related(f"{name} is set to {settings.value(name)} here", value_span(element))
                   for name, element in settings.elements.items() if name in ("inherit_context", "fresh_context")]
        yield make("TD302", task.name_span,
                   f"task has no context at all ({_how(settings, 'inherit_context')}, no accumulation, "
                   f"{_how(settings, 'fresh_context')}, no file_paths, no inputs): enable fresh_context, "
                   "inherit context, or give it inputs or file_paths",
                   related=related)


@rule("TD303", Severity.ERROR, "accumulation settings on an operator that does not accumulate",
      what="`accumulate_data` and `accumulation_format` apply to a sequential only. Error on a reduce, "
           "warning on other operators. `accumulate_data=false` alone says what is true anyway and is "
           "not reported.",
      why="Only the sequential operator keeps a history of step outputs; elsewhere the settings do "
          "nothing and suggest a behaviour that does not happen (a reduce in particular folds through "
          "its accumulator, not through accumulation).",
      bad='<task type="reduce">\n  <context_management>\n    <accumulate_data>true</accumulate_data>\n'
          '  </context_management>\n  …\n</task>',
      good='<task type="reduce">\n  <context_management>\n    <inherit_context>none</inherit_context>\n'
           '  </context_management>\n  …\n</task>',
      fix="Remove the setting (quick fix; not applied by --fix).",
      tags=ACCUMULATION_FIELDS)
def accumulation_operator_rule(ctx: RuleContext):
    kinds = operators(ctx)
    for task, settings in ctx.effective.items():
        if "accumulate_data" not in settings.elements and "accumulation_format" not in settings.elements:
            continue  # nothing to report on this task
        if task not in kinds or kinds[task] is None:  # a ref, or a type version 1 does not know
            continue
        if OPERATOR_DEFAULTS[settings.operator].accumulate_data is not None or kinds[task] == "sequential":
            continue
        severity = Severity.ERROR if settings.operator == "reduce" else Severity.WARNING
        for name in ACCUMULATION_FIELDS:
            element = settings.elements.get(name)
            if element is None or element.parent is None or element.parent.tag != "context_management":
                continue
            if name == "accumulate_data" and settings.accumulate_data is False:
                continue
            yield make("TD303", element.name_span,
                       f"<{name}> has no effect on this {_operator_label(settings)} task: only a sequential "
                       "accumulates step outputs; remove it",
                       severity=severity, fixes=[remove_fix(ctx.document, element, f"Remove <{name}>")])


@rule("TD304", Severity.WARNING, "accumulation_format while accumulate_data is false",
      what="`accumulation_format` chooses what a sequential accumulates; with `accumulate_data=false` "
           "nothing is accumulated.",
      why="The format is ignored, which usually means one of the two settings is not what was meant.",
      bad='<context_management>\n  <accumulate_data>false</accumulate_data>\n'
          '  <accumulation_format>full_output</accumulation_format>\n</context_management>',
      good='<context_management>\n  <accumulate_data>true</accumulate_data>\n'
           '  <accumulation_format>full_output</accumulation_format>\n</context_management>',
      fix="Set `accumulate_data` to `true`, or remove `accumulation_format` (quick fix).",
      tags=("accumulation_format",))
def format_without_accumulation_rule(ctx: RuleContext):
    for task, settings in ctx.effective.items():
        if settings.accumulate_data is not False:
            continue
        element = settings.elements.get("accumulation_format")
        if element is None:
            continue
        yield make("TD304", element.name_span,
                   "<accumulation_format> has no effect: accumulate_data is false; set accumulate_data "
                   "to true or remove accumulation_format",
                   related=[Related("accumulate_data is set to false here",
                                    value_span(settings.elements["accumulate_data"]))]
                   if "accumulate_data" in settings.elements else [],
                   fixes=[remove_fix(ctx.document, element, "Remove <accumulation_format>")])


def _legacy_value_rule(ctx: RuleContext, code: str, name: str):
    for element in ctx.tagged(name):
        parent = element.parent
        if parent is None or parent.tag != "context_management":
            continue
        value = element.text.strip()
        mapped = LEGACY_VALUES[name].get(value)
        if mapped is None:
            continue
        span = value_span(element)
        yield make(code, span,
                   f"legacy {name} value '{value}': version 1 writes '{mapped}'",
                   fixes=[Fix(f"Replace '{value}' with '{mapped}'", (TextEdit(span, mapped),))])


@rule("TD305", Severity.ERROR, "legacy boolean inherit_context",
      what="Older documents write `inherit_context` as a boolean; version 1 uses `full`, `none` or `subset`.",
      why="`true`/`false` are not values of inherit_context; `true` meant inheriting everything (`full`), "
          "`false` meant inheriting nothing (`none`).",
      bad='<inherit_context>false</inherit_context>',
      good='<inherit_context>none</inherit_context>',
      fix="Replace `true` with `full`, `false` with `none` (safe fix).",
      replaces=("TD105",),
      tags=("inherit_context",))
def legacy_inherit_rule(ctx: RuleContext):
    yield from _legacy_value_rule(ctx, "TD305", "inherit_context")


@rule("TD306", Severity.ERROR, "legacy accumulation_format value",
      what="Older documents write `accumulation_format` as `full` or `minimal`; version 1 uses "
           "`full_output` or `notes_only`.",
      why="`full`/`minimal` are not values of accumulation_format in version 1.",
      bad='<accumulation_format>minimal</accumulation_format>',
      good='<accumulation_format>notes_only</accumulation_format>',
      fix="Replace `full` with `full_output`, `minimal` with `notes_only` (safe fix).",
      replaces=("TD105",),
      tags=("accumulation_format",))
def legacy_format_rule(ctx: RuleContext):
    yield from _legacy_value_rule(ctx, "TD306", "accumulation_format")


@rule("TD307", Severity.ERROR, "context setting outside <context_management>",
      what="Older documents put `inherit_context` (and the other settings) directly under `<task>`; "
           "version 1 groups them in `<context_management>`.",
      why="A setting outside `<context_management>` is not part of the grammar. The checker still reads it "
          "(legacy values mapped) so the effective settings stay what was meant.",
      bad='<task type="sequential">\n  <inherit_context>true</inherit_context>\n  …\n</task>',
      good='<task type="sequential">\n  <context_management>\n    <inherit_context>full</inherit_context>\n'
           '  </context_management>\n  …\n</task>',
      fix="Move the setting into `<context_management>`, mapping legacy values (safe fix).",
      replaces=("TD101",),
      tags=FIELDS)
def placement_rule(ctx: RuleContext):
    owners = set()  # the tasks with a setting directly under them
    for setting in ctx.tagged(*FIELDS):
        parent = setting.parent
        if parent is not None and parent.tag in TASK_TAGS:
            owners.add(parent)
    if not owners:
        return
    for task in tasks(ctx):
        if task not in owners:
            continue
        loose = [child for child in task.children if child.tag in FIELDS]
        if not loose:
            continue
        block = task.child("context_management")
        already = {child.tag for child in block.children} if block is not None else set()
        movable = [child for child in loose if child.tag not in already]
        fix = _move_fix(ctx, task, block, movable) if movable else None
        for child in loose:
            value = child.text.strip()
            mapped, was_legacy = read_value(child.tag, value)
            note = f" (legacy value '{value}' means '{mapped}')" if was_legacy else ""
            if child.tag in already:
                yield make("TD307", child.name_span,
                           f"<{child.tag}> belongs inside <context_management>, which already sets it: remove this one",
                           fixes=[remove_fix(ctx.document, child, f"Remove <{child.tag}>")])
            else:
                yield make("TD307", child.name_span,
                           f"<{child.tag}> belongs inside <context_management>{note}: move it there",
                           fixes=[fix] if fix is not None else [])


def _setting_text(child: Element) -> str:
    value = child.text.strip()
    mapped, was_legacy = read_value(child.tag, value)
    if was_legacy:
        value = mapped
    return f"<{child.tag}>{value}</{child.tag}>"


def _move_fix(ctx: RuleContext, task: Element, block: Element | None, movable: list[Element]) -> Fix | None:
    text = ctx.document.text
    if any(child.children or not child.closed for child in movable):
        return None
    edits = []
    if block is None:
        first = movable[0]
        indent = line_indent(text, first.start_tag.start)
        unit = indent_unit(indent)
        lines = "".join(f"\n{indent}{unit}{_setting_text(child)}" for child in movable)
        edits.append(TextEdit(first.span, f"<context_management>{lines}\n{indent}</context_management>"))
        rest = movable[1:]
    else:
        if block.end_tag is None:
            return None
        indent = line_indent(text, block.start_tag.start)
        unit = indent_unit(indent)
        line_start = text.rfind("\n", 0, block.end_tag.start) + 1
        if text[line_start:block.end_tag.start].strip():
            insert = TextEdit(Span(block.end_tag.start, block.end_tag.start),
                              "".join(_setting_text(child) for child in movable))
        else:
            insert = TextEdit(Span(line_start, line_start),
                              "".join(f"{indent}{unit}{_setting_text(child)}\n" for child in movable))
        edits.append(insert)
        rest = movable
    for child in rest:
        edits.append(TextEdit(removal_span(text, child.span), ""))
    return Fix("Move into <context_management>", tuple(edits))


@rule("TD308", Severity.WARNING, "fresh_context without a memory index",
      what="A task sets `fresh_context` to `enabled` in a project that has no memory index "
           "(`.taskdsl/memory.json`, or the file `[memory] index` names in taskdsl.toml). Only an explicit "
           "setting is checked: the operators whose default is `enabled` (reduce, atomic subtask) are not, so "
           "a project that does not use the memory is not told about it on every reduce.",
      why="Fresh context is what the memory system matches in its index; without an index it matches "
          "nothing, and the task runs with no context from memory although it asked for some.",
      bad='<task>\n  <description>Summarise the quarterly revenue</description>\n  <context_management>\n'
          '    <inherit_context>none</inherit_context>\n    <fresh_context>enabled</fresh_context>\n'
          '  </context_management>\n</task>\n<!-- and no .taskdsl/memory.json in the project -->',
      good='<!-- after `taskdsl memory index` wrote .taskdsl/memory.json -->\n<task>\n'
           '  <description>Summarise the quarterly revenue</description>\n  <context_management>\n'
           '    <inherit_context>none</inherit_context>\n    <fresh_context>enabled</fresh_context>\n'
           '  </context_management>\n</task>',
      fix="Write the index with `taskdsl memory index` (add `--model M` for one-line summaries), or set "
          "`fresh_context` to `disabled`.",
      tags=("fresh_context",))
def memory_index_rule(ctx: RuleContext):
    import os

    from taskdsl.project import memory_index
    from taskdsl.project.workspace import project_root

    asking = [settings.elements["fresh_context"] for settings in ctx.effective.values()
              if settings.fresh_context == "enabled" and "fresh_context" in settings.elements]
    if not asking or ctx.path is None:
        return
    root = getattr(ctx.settings, "project_root", None) or project_root(os.path.abspath(ctx.path))
    where = memory_index.index_path(root, ctx.settings)
    if os.path.isfile(where):
        return
    shown = memory_index.relative(where, root)
    for element in asking:
        yield make("TD308", value_span(element),
                   f"fresh_context=enabled, but the project has no memory index ({shown}): the task gets no files "
                   "from memory; write the index with `taskdsl memory index`")
