"""Inputs and variables (TD401–TD404), over taskdsl.meaning.scope and taskdsl.language.templating."""

from __future__ import annotations

import re

from taskdsl.language.diagnostics import Fix, Related, Severity, TextEdit
from taskdsl.language.document import Element, Span
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import make
from taskdsl.meaning.scope import Scopes
from taskdsl.meaning.model import TEXT_TAGS, from_attr
from taskdsl.language.templating import Placeholder, parse_placeholder



@rule("TD401", Severity.ERROR, "duplicate input name in one scope",
      what="Two `<input>`s of the same `<inputs>` have the same name.",
      why="Inputs are bound by name in the task's environment: the second would silently replace the "
          "first.",
      bad='<inputs>\n  <input name="data">a</input>\n  <input name="data">b</input>\n</inputs>',
      good='<inputs>\n  <input name="data">a</input>\n  <input name="config">b</input>\n</inputs>',
      fix="Rename one of the inputs.",
      tags=("inputs",))
def duplicate_input_rule(ctx: RuleContext):
    for inputs in ctx.tagged("inputs"):
        seen: dict[str, Element] = {}
        for item in inputs.children_named("input"):
            attr = item.attr("name")
            if attr is None or not attr.value:
                continue
            if attr.value in seen:
                first = seen[attr.value].attr("name")
                yield make("TD401", attr.value_span or attr.name_span,
                           f"input '{attr.value}' is declared twice in these <inputs>: rename one of them",
                           related=[Related(f"'{attr.value}' first declared here", first.value_span or first.name_span)])
            else:
                seen[attr.value] = item


def _text_placeholders(ctx: RuleContext) -> list[tuple[Element, Placeholder, int]]:
    """(element, placeholder, span) of every {{…}} in text that may hold one: the model's."""
    return ctx.model.placeholders(ctx.tagged(*TEXT_TAGS))


def _scopes(ctx: RuleContext) -> Scopes:
    """The names visible at each element: the model's (TD402 and TD403 share them)."""
    return ctx.model.scopes


@rule("TD402", Severity.ERROR, "{{var}} names nothing visible",
      what="A `{{name}}` (or a variable argument of `{{fn(…)}}`) names no input of an enclosing task, no "
           "param of the enclosing template, no reduce-bound name and no declared global (`[globals]` in "
           "`taskdsl.toml`, or the editor's `taskdsl.globals`). `last_output` is the previous step's "
           "output: visible in a sequential's second and later steps (and in tasks below them that "
           "inherit), and at the top of a root `<cond>` file; a `<cond>` tests it, so a cond elsewhere "
           "has nothing to test. An input's nested task never sees its sibling inputs. Always an error: "
           "nothing else can supply the name (a `--input` or `--global` for a name the template does "
           "not declare is refused), and the run refuses the template with the same message. Names used "
           "inside an element the grammar does not allow where it stands (a misspelt `<reduce_task>`: "
           "TD101) are not reported until the tag is fixed: what they can see depends on the element meant.",
      why="At run time the lookup fails and the task stops with an error naming the variable.",
      bad='<template name="greet" params="person">\n  <task><description>Hello {{persn}}</description></task>\n</template>',
      good='<template name="greet" params="person">\n  <task><description>Hello {{person}}</description></task>\n</template>',
      fix="Correct the name (did-you-mean quick fix), declare an input, or add it to `taskdsl.globals`.",
      tags=(*TEXT_TAGS, "cond"))
def unknown_variable_rule(ctx: RuleContext):
    problems = ctx.model.variable_problems(text_elements=ctx.tagged(*TEXT_TAGS), conds=ctx.tagged("cond"))
    for problem in problems:
        use = problem.use
        fixes = []
        if problem.guess and use.kind != "cond":
            raw = ctx.document.text[use.span.start:use.span.end]
            match = re.search(rf"\b{re.escape(use.name)}\b", raw)
            if match:
                name_span = Span(use.span.start + match.start(), use.span.start + match.end())
                fixes.append(Fix(f"Replace with '{problem.guess}'", (TextEdit(name_span, problem.guess),), safe=False))
        yield make("TD402", use.span, problem.message,
                   severity=Severity.ERROR if problem.error else Severity.WARNING, fixes=fixes)


@rule("TD403", Severity.ERROR, "from names nothing visible",
      what="`<input from=\"x\">` (or `<input name=\"x\"/>` on a ref, short for `from=\"x\"`) takes the value "
           "of variable x where the task is called; x is not an input of an enclosing task, a template "
           "param, a reduce-bound name, `last_output` or a declared global. The inputs of a task run "
           "directly (a root task, or a library task run with `--task`) are the exception: there the caller "
           "is the run, so `from=\"x\"` takes the run's `--input x=…` (a ref to that task binds its inputs "
           "itself); a run given neither x nor the input fails with `missing_input` naming both. An empty "
           "`<input name=\"x\"/>` of a template's task takes the call's argument x, and x is not one of the "
           "template's params.",
      why="At run time the lookup fails: the run refuses the template with the same message. Sequential "
          "steps do not see each other by name: the previous step's output is `last_output`.",
      bad='<input name="draft" from="previous_step"/>',
      good='<input name="draft" from="last_output"/>',
      fix="Name a visible variable (did-you-mean quick fix), or declare a global in `[globals]`.",
      tags=("input",))
def unknown_from_rule(ctx: RuleContext):
    for problem in ctx.model.from_problems(ctx.tagged("input")):
        attr = from_attr(problem.item) or problem.item.attr("name")  # a template task's empty input: its name
        fixes = []
        if problem.guess and attr.name == "name":  # the short form: the name binds the param, keep it
            end = attr.value_span.end + 1
            fixes.append(Fix(f"Take it from '{problem.guess}'",
                             (TextEdit(Span(end, end), f' from="{problem.guess}"'),), safe=False))
        elif problem.guess:
            start = attr.value_span.start + (len(attr.value) - len(attr.value.lstrip()))
            fixes.append(Fix(f"Replace with '{problem.guess}'",
                             (TextEdit(Span(start, start + len(problem.name)), problem.guess),), safe=False))
        yield make("TD403", attr.value_span, problem.message,
                   severity=Severity.ERROR if problem.error else Severity.WARNING, fixes=fixes)


@rule("TD404", Severity.ERROR, "malformed {{…}}",
      what="A `{{…}}` that is neither a variable (`{{name}}`, `{{name.field}}`, `{{name[0]}}`) nor an "
           "inline call (`{{fn(a, \"lit\", 3, true)}}`), or a `{{` never closed.",
      why="The evaluator cannot substitute it; it would fail at run time.",
      bad='<description>Hello {{ user name }}</description>',
      good='<description>Hello {{user_name}}</description>',
      fix="Write a variable or a call, or close the braces. Quick fix (safe): `{{name}` one brace short becomes "
          "`{{name}}` when what it holds is a variable or a call.",
      tags=TEXT_TAGS)
def malformed_placeholder_rule(ctx: RuleContext):
    for _element, placeholder, span in _text_placeholders(ctx):
        if placeholder.kind == "malformed":
            yield make("TD404", span, f"malformed {{{{…}}}}: {placeholder.error}",
                       fixes=_close_fix(ctx.document.text, span))


def _close_fix(text: str, span: Span) -> list[Fix]:
    """`{{name}` (one brace short) → `{{name}}`: only when what the braces hold is a variable or a call."""
    written = text[span.start:span.end]
    if not written.startswith("{{"):
        return []
    close = written.find("}")
    if close < 0 or "{" in written[2:close] or written[close + 1:close + 2] == "}":
        return []
    inner = written[2:close]
    if parse_placeholder(inner).kind not in ("var", "call"):
        return []
    end = span.start + close + 1
    return [Fix(f"Close as {{{{{inner.strip()}}}}}", (TextEdit(Span(end, end), "}"),))]
