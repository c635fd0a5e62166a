"""Structure rules (TD2xx): what each operator needs and what belongs only to one operator.

TD209 and TD210 are this project's codes for two legacy forms SPEC §3 lists ("<call task=>" and
"<task name= parameters=>"): the schema would only say "attribute not allowed"; these explain
the version 1 form and fix it.
"""

from __future__ import annotations

import re

from taskdsl.language.diagnostics import Fix, Related, Severity, TextEdit
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import TASK_TAGS, line_indent, make, operators, raw_type, tasks
from taskdsl.language.document import Span
from taskdsl.meaning.model import inputs as input_elements, unbound_placeholder, unknown_type

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
from taskdsl.language.names import PARAM_RE  # noqa: E402  (entries separated by whitespace and/or commas)
STEP_TAGS = ("task", "call", "cond")
BRANCH_TAGS = ("task", "call")
REDUCE_ONLY = ("initial_value", "inner_task", "reduction_task")


def _type_label(element) -> str:
    return raw_type(element) or "atomic"


@rule("TD201", Severity.ERROR, "steps on a non-sequential task, or a sequential without steps",
      what="`<steps>` belongs to `type=\"sequential\"` only, and a sequential needs at least one step "
           "(`<task>`, `<call>` or `<cond>`) in its `<steps>`.",
      why="Only the sequential operator runs steps; elsewhere they are silently ignored. A sequential "
          "with no step does nothing.",
      bad='<task type="atomic">\n  <description>Summarise</description>\n  <steps><task><description>a</description></task></steps>\n</task>',
      good='<task type="sequential">\n  <description>Summarise</description>\n  <steps><task><description>a</description></task></steps>\n</task>',
      fix="Set `type=\"sequential\"`, or remove `<steps>`; give a sequential its steps.",
      replaces=("TD102",),
      tags=TASK_TAGS)
def steps_rule(ctx: RuleContext):
    misplaced = "steps" in ctx.by_tag  # else only the sequentials need a look
    for task, kind in operators(ctx).items():
        if kind is None or (kind != "sequential" and not misplaced):
            continue
        steps = task.child("steps")
        if kind != "sequential":
            if steps is not None:
                yield make("TD201", steps.name_span,
                           f"<steps> belongs to a sequential task, but this <{task.tag}> is type "
                           f"'{_type_label(task)}': set type=\"sequential\" or remove <steps>")
        elif steps is None:
            yield make("TD201", task.name_span,
                       "sequential task has no <steps>: add <steps> with one or more <task>, <call> or <cond>")
        elif not any(child.tag in STEP_TAGS for child in steps.children):
            yield make("TD201", steps.name_span,
                       "<steps> holds no step: add one or more <task>, <call> or <cond>")


def _misspelt(document, task, missing: list[str]) -> str:
    """A child of the reduce the grammar does not allow (TD101) whose name is close to a missing
    part: the TD202 is the typo's follow-on, and says so."""
    from taskdsl.language.names import nearest
    from taskdsl.meaning.model import misplaced

    wanted = [tag.strip("<>") for tag in missing if tag.startswith("<")]
    for child in task.children:
        meant, _ = nearest(child.tag, wanted)
        if meant is not None and misplaced(child) is child:
            line = document.position(child.start)[0] + 1
            return f" (the <{child.tag}> on line {line} is likely the <{meant}>: fix its name, TD101)"
    return ""


@rule("TD202", Severity.ERROR, "reduce without inner_task, reduction_task or inputs; reduce-only elements elsewhere",
      what="A reduce task needs `<inputs>` (what it folds over), `<inner_task>` and `<reduction_task>`; "
           "`<initial_value>`, `<inner_task>` and `<reduction_task>` belong to a reduce only. An empty "
           "`<input>` of a `<reduction_task>` must be one the operator binds: `current_result`, "
           "`accumulator` or `original_input` (every empty input of an `<inner_task>` is the current item).",
      why="The reduce operator runs inner_task on each input and folds the results with reduction_task; "
          "without them there is nothing to run, and on other operators these elements are ignored.",
      bad='<task type="reduce">\n  <description>Sum</description>\n  <inputs><input name="a">1</input></inputs>\n</task>',
      good='<task type="reduce">\n  <description>Sum</description>\n  <inputs><input name="a">1</input></inputs>\n'
           '  <inner_task><description>Parse {{current_data}}</description></inner_task>\n'
           '  <reduction_task><description>Add {{current_result}} to {{accumulator}}</description></reduction_task>\n</task>',
      fix="Add the missing parts to the reduce, or set `type=\"reduce\"` on the task that holds them. When a "
          "child's name is a typo of the missing part (`<reduce_task>`, reported as TD101), the message names it: "
          "fixing that name fixes both.",
      replaces=("TD102",),
      tags=TASK_TAGS)
def reduce_rule(ctx: RuleContext):
    misplaced = any(tag in ctx.by_tag for tag in REDUCE_ONLY)  # else only the reduces need a look
    for task, kind in operators(ctx).items():
        if kind is None or (kind != "reduce" and not misplaced):
            continue
        if kind == "reduce":
            missing = [f"<{tag}>" for tag in ("inputs", "inner_task", "reduction_task") if task.child(tag) is None]
            inputs = task.child("inputs")
            if inputs is not None and not inputs.children_named("input") and "<inputs>" not in missing:
                missing.insert(0, "an <input> in <inputs>")
            if missing:
                listed = " and ".join(missing) if len(missing) <= 2 else ", ".join(missing[:-1]) + " and " + missing[-1]
                yield make("TD202", task.name_span,
                           f"reduce task lacks {listed}: a reduce needs <inputs>, <inner_task> and <reduction_task>"
                           + _misspelt(ctx.document, task, missing))
        else:
            for child in task.children:
                if child.tag in REDUCE_ONLY:
                    yield make("TD202", child.name_span,
                               f"<{child.tag}> belongs to a reduce task, but this <{task.tag}> is type "
                               f"'{_type_label(task)}': set type=\"reduce\" or remove <{child.tag}>")
    for reduction in ctx.tagged("reduction_task"):
        for item in input_elements(reduction):
            problem = unbound_placeholder(item)
            if problem:
                yield make("TD202", item.name_span, problem)


@rule("TD203", Severity.ERROR, "script without command; command on a non-script task",
      what="A `type=\"script\"` task needs a `<command>` with text (not blank, not only an XML comment); "
           "`<command>` belongs to script tasks only.",
      why="A script task runs its command with /bin/sh; without one there is nothing to run. On other "
          "operators a command is never run.",
      bad='<task type="script">\n  <description>List files</description>\n</task>',
      good='<task type="script">\n  <description>List files</description>\n  <command>ls</command>\n</task>',
      fix="Add `<command>` to the script, or set `type=\"script\"` on the task that has one.",
      tags=TASK_TAGS)
def script_rule(ctx: RuleContext):
    misplaced = "command" in ctx.by_tag  # else only the scripts need a look
    for task, kind in operators(ctx).items():
        if kind is None or (kind != "script" and not misplaced):
            continue
        command = task.child("command")
        if kind == "script":
            if command is None:
                yield make("TD203", task.name_span,
                           "script task has no <command>: add <command> with the shell command to run")
            elif not command.text.strip():
                yield make("TD203", command.name_span,
                           "<command> is empty: write the shell command to run in it")
        elif command is not None:
            yield make("TD203", command.name_span,
                       f"<command> belongs to a script task, but this <{task.tag}> is type "
                       f"'{_type_label(task)}': set type=\"script\" or remove <command>")


@rule("TD204", Severity.ERROR, "atomic task with neither description nor instructions",
      what="An atomic task needs a `<description>` or `<instructions>` with text (an empty or blank one "
           "does not count): it is the prompt.",
      why="The model is asked with the instructions (or the description when there are none); "
          "without either, the prompt is empty.",
      bad='<task>\n  <model>gpt-4o-mini</model>\n</task>',
      good='<task>\n  <description>Summarise the report</description>\n</task>',
      fix="Add `<description>` (or `<instructions>`).",
      tags=TASK_TAGS)
def prompt_rule(ctx: RuleContext):
    for task, kind in operators(ctx).items():
        if kind != "atomic":
            continue
        description, instructions = task.child("description"), task.child("instructions")
        if description is None and instructions is None:
            yield make("TD204", task.name_span,
                       f"atomic <{task.tag}> has neither <description> nor <instructions>: add the prompt text")
        elif not any(e is not None and e.text.strip() for e in (description, instructions)):
            blank = description if description is not None else instructions
            yield make("TD204", blank.name_span,
                       f"<{blank.tag}> is empty and the atomic task has no other prompt text: write what to ask")


@rule("TD205", Severity.ERROR, "a ref task with a body",
      what="`<task ref=\"X\">` calls the library task X: it may hold `<inputs>` (binding X's params) and "
           "`<context_management>`, nothing else.",
      why="The body of a referenced task is defined where X is; anything else written at the call site "
          "is ignored.",
      bad='<task ref="summarise">\n  <description>Summarise</description>\n</task>',
      good='<task ref="summarise">\n  <inputs><input name="text" from="report"/></inputs>\n</task>',
      fix="Remove the element, or drop `ref` and define the task here.",
      tags=("task",))
def ref_body_rule(ctx: RuleContext):
    for task in ctx.tagged("task"):
        if task.attr("ref") is None:
            continue
        target = task.get("ref") or ""
        for child in task.children:
            if child.tag not in ("inputs", "context_management"):
                yield make("TD205", child.name_span,
                           f"<{child.tag}> is not allowed in a ref task: <task ref=\"{target}\"> takes only "
                           "<inputs> and <context_management> (the body is defined by the referenced task)")


@rule("TD206", Severity.ERROR, "cond without a case, or a case without a test or a task",
      what="A `<cond>` needs one or more `<case test=\"…\">`, each with one `<task>` or `<call>`; an "
           "optional `<default>` also holds one task or call.",
      why="A case without a test can never be chosen; a case without a task has nothing to run.",
      bad='<cond>\n  <case>\n    <task><description>Handle it</description></task>\n  </case>\n</cond>',
      good='<cond>\n  <case test="output.valid == true">\n    <task><description>Handle it</description></task>\n  </case>\n</cond>',
      fix="Add the test or the task.",
      replaces=("TD102", "TD104"),
      tags=("cond",))
def cond_rule(ctx: RuleContext):
    for cond in ctx.tagged("cond"):
        cases = cond.children_named("case")
        if not cases and not cond.children:  # a misspelt <case> is the schema's TD101, not a second error
            yield make("TD206", cond.name_span, "<cond> has no <case>: add <case test=\"…\"> with a task or call")
        for case in cases:
            if case.attr("test") is None:
                yield make("TD206", case.name_span,
                           "<case> has no test: add test=\"…\" (an expression over output, e.g. output.ok == true)")
            if not case.children:  # a misspelt <task> is the schema's TD101 only
                yield make("TD206", case.name_span, "<case> has no task: add one <task> or <call> to run when the test holds")
        for default in cond.children_named("default"):
            if not default.children:
                yield make("TD206", default.name_span, "<default> has no task: add one <task> or <call>, or remove <default>")


@rule("TD207", Severity.ERROR, "template: missing or invalid name, duplicate or invalid params",
      what="A `<template>` needs a `name` that is an identifier and `params` that are distinct identifiers, "
           "comma-separated.",
      why="Calls find the template by name and bind arguments to params by position or name; an invalid "
          "or repeated param cannot be bound.",
      bad='<template name="analyze data" params="dataset,dataset">…</template>',
      good='<template name="analyze_data" params="dataset,config">…</template>',
      fix="Rename to an identifier (`[A-Za-z_][A-Za-z0-9_]*`); remove the repeated param.",
      replaces=("TD104", "TD105"),
      tags=("template",))
def template_rule(ctx: RuleContext):
    for template in ctx.tagged("template"):
        name = template.attr("name")
        if name is None:
            yield make("TD207", template.name_span, "template has no name: add name=\"…\" (an identifier)")
        elif not IDENT_RE.fullmatch(name.value):
            span = name.value_span or name.name_span
            suggestion = re.sub(r"[^A-Za-z0-9_]+", "_", name.value.strip()).strip("_") or "template"
            if suggestion[0].isdigit():
                suggestion = "_" + suggestion
            yield make("TD207", span,
                       f"template name '{name.value}' is not an identifier: use letters, digits and '_' "
                       f"(e.g. '{suggestion}')",
                       fixes=[Fix(f"Rename to '{suggestion}'", (TextEdit(span, suggestion),), safe=False)])
        params = template.attr("params")
        value_span = params.value_span if params is not None else None
        if value_span is None:
            continue
        seen: dict[str, re.Match] = {}  # spans are made only for what is reported
        exact = len(value_span) == len(params.value)
        for match in PARAM_RE.finditer(params.value):
            entry = match.group(0).strip()
            if not entry:
                continue
            if not IDENT_RE.fullmatch(entry):
                yield make("TD207", _param_span(match, value_span, exact),
                           f"param '{entry}' is not an identifier: params are names ([A-Za-z_][A-Za-z0-9_]*) "
                           "separated by commas and/or spaces")
            elif entry in seen:
                yield make("TD207", _param_span(match, value_span, exact),
                           f"param '{entry}' is declared twice: remove the repeated one",
                           related=[Related(f"'{entry}' first declared here",
                                            _param_span(seen[entry], value_span, exact))])
            else:
                seen[entry] = match


def _param_span(match: re.Match, value_span: Span, exact: bool) -> Span:
    """The trimmed entry a PARAM_RE match found (the whole value when entities make offsets inexact)."""
    if not exact:
        return value_span
    written = match.group(0)
    start = value_span.start + match.start() + len(written) - len(written.lstrip())
    return Span(start, start + len(written.strip()))


@rule("TD208", Severity.ERROR, "type not supported in version 1",
      what="`type` is one of `atomic`, `sequential`, `reduce`, `script`. Older documents use types that "
           "version 1 does not have (`director_evaluator_loop`, `function`, `composite`, …).",
      why="The evaluator has an operator for each version 1 type only; any other type cannot run.",
      bad='<task type="director_evaluator_loop">…</task>',
      good='<task type="sequential">\n  <steps>\n    <task><description>Draft</description></task>\n'
           '    <task type="script"><command>./evaluate.sh</command></task>\n  </steps>\n</task>',
      fix="Use a version 1 type; a director-evaluator loop becomes a sequential with a script step.",
      replaces=("TD105",),
      tags=TASK_TAGS)
def type_rule(ctx: RuleContext):
    for task in tasks(ctx):
        attr = task.attr("type")
        if attr is None or attr.value_span is None:
            continue
        unknown = unknown_type(task)
        if unknown is not None and unknown[0] == "TD208":  # a typo of a real type: the schema's TD105 lists the values
            yield make("TD208", attr.value_span, unknown[1])


@rule("TD209", Severity.ERROR, "legacy <call task=>",
      what="Older documents call a template with `<call task=\"X\">`; version 1 writes `<call template=\"X\">`.",
      why="`task` is not an attribute of `<call>` in version 1, so the call would have no target.",
      bad='<call task="validate_input">\n  <arg>user_input</arg>\n</call>',
      good='<call template="validate_input">\n  <arg>user_input</arg>\n</call>',
      fix="Rename the attribute `task` to `template` (safe fix).",
      replaces=("TD103", "TD104"),
      tags=("call",))
def call_task_rule(ctx: RuleContext):
    for call in ctx.tagged("call"):
        attr = call.attr("task")
        if attr is None:
            continue
        fixes = []
        if call.attr("template") is None:
            fixes.append(Fix("Rename task= to template=", (TextEdit(attr.name_span, "template"),)))
        yield make("TD209", Span(call.name_span.start, attr.name_span.end),
                   f"legacy <call task=\"{attr.value}\">: version 1 writes <call template=\"{attr.value}\">",
                   fixes=fixes)


LEGACY_TASK_ATTRS = ("parameters", "returns")


@rule("TD210", Severity.ERROR, "legacy <task name= parameters=> function form",
      what="Older documents declare a function as `<task name=\"f\" parameters=\"a,b\">`; version 1 wraps the "
           "task in `<template name=\"f\" params=\"a,b\">`.",
      why="`parameters` (and `returns`) are not attributes of `<task>`: the params would not be bound.",
      bad='<task name="validate_input" parameters="data,rules">\n  <description>Validate {{data}}</description>\n</task>',
      good='<template name="validate_input" params="data,rules">\n<task>\n  <description>Validate {{data}}</description>\n</task>\n</template>',
      fix="Wrap the task in `<template name= params= returns=>` and move the attributes there (safe fix, "
          "offered for a root task or a task of a `<library>`).",
      replaces=("TD103",),
      tags=("task",))
def task_parameters_rule(ctx: RuleContext):
    text = ctx.document.text
    for task in ctx.tagged("task"):
        if task.attr("parameters") is None:
            continue
        legacy = [a for a in task.attrs if a.name in LEGACY_TASK_ATTRS]
        span = Span(task.name_span.start, max(a.name_span.end for a in legacy))
        parameters = task.attr("parameters")
        fixes = []
        top = task.parent is None or task.parent.tag == "library"
        name = task.attr("name")
        if top and name is not None and task.closed:
            head = f'<template name="{_quote(name.value)}" params="{_quote(parameters.value)}"'
            returns = task.attr("returns")
            if returns is not None:
                head += f' returns="{_quote(returns.value)}"'
            head += ">"
            indent = line_indent(text, task.start_tag.start)
            edits = [TextEdit(Span(task.start_tag.start, task.start_tag.start), head + "\n" + indent)]
            for attribute in [name, *legacy]:
                end = attribute.value_span.end + 1 if attribute.value_span is not None and attribute.quoted else attribute.name_span.end
                start = attribute.name_span.start
                while start > 0 and text[start - 1] in " \t\r\n":
                    start -= 1
                edits.append(TextEdit(Span(start, end), ""))
            edits.append(TextEdit(Span(task.end, task.end), "\n" + indent + "</template>"))
            fixes.append(Fix("Wrap in <template name= params=>", tuple(edits)))
        yield make("TD210", span,
                   f"legacy <task name= parameters=\"{parameters.value}\">: version 1 declares a function as "
                   f"<template name=\"{name.value if name else '…'}\" params=\"{parameters.value}\"> around the task",
                   fixes=fixes)


def _quote(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")

