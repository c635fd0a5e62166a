"""Library rules (TD5xx): references resolved against the workspace library.

The document being checked is authoritative for its own definitions and references (it may be
an editor buffer newer than the index); every other file comes from `ctx.library`. With no
library (a lone document), references resolve against the document alone and TD501 says so:
"not … in this file (no workspace library)". A ref the document cannot resolve fails at run time
too, so it stays an error, but the message makes plain that no workspace was searched.
"""

from __future__ import annotations

import os

from taskdsl.language.diagnostics import Fix, Related, Severity, TextEdit
from taskdsl.library import Definition, FileIndex, Library, Reference, _Graph, index_document, normalize, suggest
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.language.names import nearest as nearest_name, typo_distance
from taskdsl.language.vocabulary import matches
from taskdsl.rules.util import append_child_edit, make, may_suggest
from taskdsl.meaning.model import ambiguous_key_message, argument_problems, unknown_target_message

MAX_RELATED = 5


class _View:
    """The library as this document sees it: its own definitions plus every other file's."""

    __slots__ = ("library", "path", "index", "_graph", "_named", "_candidates", "_targets", "_spellings")

    def __init__(self, ctx: RuleContext):
        self.library: Library | None = ctx.library
        self.path = normalize(ctx.path) if ctx.path else None
        self.index = self._index(ctx)
        self._graph: _Graph | None = None
        self._named: dict[str, list[Definition]] = {}  # the rules ask for the same names again
        self._candidates: dict[str, list[Definition]] = {}
        self._targets: dict[str, Definition | None] = {}
        self._spellings: dict[bool, list[str]] = {}  # by "a type:subtype key?"

    def _index(self, ctx: RuleContext) -> FileIndex:
        if self.library is not None and self.path:
            stored = self.library.file_index(self.path)
            if stored is not None and stored.digest == hash(ctx.document.text):
                return stored
        return index_document(ctx.document, self.path)

    def named(self, name: str) -> list[Definition]:
        found = self._named.get(name)
        if found is None:
            found = self._named[name] = [d for d in self.index.definitions if d.name == name]
            if self.library is not None:
                found += [d for d in self.library.named(name) if d.path != self.path]
        return found

    def keyed(self, key: str) -> list[Definition]:
        found = [d for d in self.index.definitions if d.key == key]
        if self.library is not None:
            found += [d for d in self.library.keyed(key) if d.path != self.path]
        return found

    def candidates(self, name: str) -> list[Definition]:
        """By name first, then by type:subtype key."""
        found = self._candidates.get(name)
        if found is None:
            found = self._candidates[name] = self.named(name) or (self.keyed(name) if ":" in name else [])
        return found

    def target(self, reference: Reference) -> Definition | None:
        name = reference.name
        if name not in self._targets:
            found = self.candidates(name)
            ambiguous = reference.is_key and len({id(d) for d in found}) > 1 and not self.named(name)
            self._targets[name] = found[0] if found and not ambiguous else None
        return self._targets[name]

    def spellings(self, name: str) -> list[str]:
        """Every name (or type:subtype key, for a name with ':') a reference may spell: computed once a view."""
        keys = ":" in name
        if keys not in self._spellings:
            local = {d.key if keys else d.name for d in self.index.definitions} - {None}
            if self.library is not None:
                local |= set(self.library.keys() if keys else self.library.names())
            self._spellings[keys] = sorted(local)
        return self._spellings[keys]

    def graph(self) -> _Graph:
        if self._graph is None:
            if self.library is not None:
                self._graph = self.library.graph_with(self.index)
            else:
                lone = Library()
                self._graph = lone.graph_with(self.index)
        return self._graph

    def where(self, definition: Definition) -> str:
        line = definition.range[0][0] + 1
        if definition.path == self.path or definition.path is None:
            return f"line {line} of this file"
        base = os.path.dirname(self.path) if self.path else os.getcwd()
        return f"{os.path.relpath(definition.path, base)}:{line}"


def _view(ctx: RuleContext) -> _View:
    """One view per checked document, shared by the four rules."""
    return ctx.cached(_View)


def _definition_span(definition: Definition):
    from taskdsl.language.document import Span

    return definition.name_span or Span(definition.span.start + 1, definition.span.start + 1 + len("task"))


# --------------------------------------------------------------------------- TD501


@rule("TD501", Severity.ERROR, "reference to a task or template that is not in the library",
      what="A `<task ref>`, `<call template>` or inline `{{fn(…)}}` names a task or template that no "
           "file of the workspace library defines (by name, then by `type:subtype` key).",
      why="The evaluator looks the name up in the task library; a run refuses an unknown name before it "
          "starts. A `type:subtype` key that several definitions share is ambiguous (the message lists "
          "them). The did-you-mean never offers the task the reference is written in: that would "
          "make it call itself.",
      bad='<call template="analyse_data">\n  <arg>weather</arg>\n</call>',
      good='<call template="analyze_data">\n  <arg>weather</arg>\n</call>',
      fix="Use a name the library defines (the quick fixes offer the closest ones), add the missing "
          "template to a `*.task.xml` file of the workspace or of a library path (`library_paths` in "
          "`taskdsl.toml`, or the editor setting `taskdsl.libraryPaths`), or ref one definition by name when a "
          "key is ambiguous. A `type:subtype` key names only the definitions that write `subtype=`: "
          "`<task ref=\"atomic:standard\"/>` finds `<task name=\"reply\" subtype=\"standard\">`, never a "
          "task whose subtype is only the default.")
def unresolved_reference(ctx: RuleContext):
    view = _view(ctx)
    for reference in view.index.references:
        found = view.candidates(reference.name)
        if found and not (reference.is_key and len(found) > 1 and not view.named(reference.name)):
            continue
        if found:  # a key shared by several definitions
            names = sorted({d.name for d in found})
            message = ambiguous_key_message(reference.name, [d.name for d in found])
            yield make("TD501", reference.span, message, fixes=_replacements(reference, names))
            continue
        if may_suggest(ctx):  # never the enclosing task: a cycle
            spellings = [s for s in view.spellings(reference.name) if s != reference.owner]
        else:  # past the document's cap: no did-you-mean
            spellings = []
        options = suggest(reference.name, spellings)
        where = "this file (no workspace library)" if view.library is None else "the library"
        message = unknown_target_message(reference.name, spellings, where=where)
        yield make("TD501", reference.span, message, fixes=_replacements(reference, options))


def _replacements(reference: Reference, names: list[str]) -> list[Fix]:
    return [Fix(f"Change to '{name}'", (TextEdit(reference.span, name),), safe=False) for name in names]


# --------------------------------------------------------------------------- TD502


@rule("TD502", Severity.ERROR, "the same name is defined twice in the library",
      what="Two definitions (root tasks, templates, or named tasks of `<library>` files) share a name, "
           "in one file or across the workspace. A root task without `name` is registered under its "
           "file name, so `a.task.xml` and `<template name=\"a\">` clash too, and so do two unnamed root "
           "tasks in `a/x.task.xml` and `b/x.task.xml`, called or not (a ref, a test's `task`, `--task` "
           "and the editor name a task by it); the message says when a name comes from the file name.",
      why="A ref or call by that name could mean either; the runtime library rejects the second "
          "registration.",
      bad='<!-- lib/text.task.xml -->\n<template name="summarize" params="text">…</template>\n'
          '<!-- lib/docs.task.xml -->\n<template name="summarize" params="doc">…</template>',
      good='<template name="summarize_text" params="text">…</template>\n'
           '<template name="summarize_doc" params="doc">…</template>',
      fix="Rename one definition (rename updates every reference), give an unnamed root task a "
          "`name=` of its own, or delete the copy.")
def duplicate_definition(ctx: RuleContext):
    view = _view(ctx)
    for definition in view.index.definitions:
        others = [d for d in view.named(definition.name) if d is not definition]
        if not others:
            continue
        first = others[0]
        more = f" (and {len(others) - 1} more)" if len(others) > 1 else ""
        stem = " (named after its file)" if first.name_span is None else ""
        message = (f"'{definition.name}' is defined more than once: also at {view.where(first)}{stem}{more}; "
                   "names in the library must be unique")
        if definition.name_span is None:  # a root task without name=: its file name is its name
            message += (f"; this task has no name= and takes its file's name: give it one "
                        f"(<task name=\"…\">)")
        related = [_related(view, other) for other in others[:MAX_RELATED]]
        yield make("TD502", _definition_span(definition), message, related=related)


def _related(view: _View, other: Definition) -> Related:
    message = f"other definition of '{other.name}'"
    if other.path == view.path or other.path is None:
        return Related(message, span=_definition_span(other))
    return Related(message, path=other.path, range=other.range)


# --------------------------------------------------------------------------- TD503


@rule("TD503", Severity.ERROR, "arguments do not match the target's parameters",
      what="A `<call>` or inline `{{fn(…)}}` passes more positional arguments than the target has "
           "parameters, or leaves a parameter without a default unbound; a `<call>`'s `<arg name>` "
           "or a ref's `<input name>` names a parameter the target does not have. A named task's "
           "params are its inputs; only its literal inputs are defaults a ref may leave unbound (an "
           "input with `from` or a nested task must be bound). A run refuses the same mismatches "
           "before it starts, with the same message.",
      why="Positional args bind the params in order: a count mismatch shifts or drops values, and an "
          "unknown name binds nothing — the target then runs with a missing variable.",
      bad='<template name="analyze" params="data,config">…</template>\n'
          '<call template="analyze"><arg>weather</arg></call>',
      good='<call template="analyze"><arg>weather</arg><arg>standard_config</arg></call>',
      fix="Pass one argument per parameter (or bind it by name), and use the target's parameter names. "
          "Quick fixes: rename an unknown argument to the nearest unbound parameter (safe when it is the only "
          "close one and a typo of one or two keys); add an empty `<arg name=\"p\"></arg>` (call) or `<input name=\"p\"/>` (ref) for each "
          "unbound parameter (unsafe: the value is yours to write).")
def argument_mismatch(ctx: RuleContext):
    view = _view(ctx)
    for reference in view.index.references:
        target = view.target(reference)
        if target is None:
            continue
        params = [(p.name, p.has_default) for p in target.params]
        kind = reference.kind if reference.kind in ("ref", "test") else "call"
        problems = argument_problems(target.name, params, len(reference.positional),
                                     [name for name, _ in reference.named], kind)
        named_spans = dict(reversed(reference.named))  # the first span of each name
        for problem in problems:
            if problem.kind == "too-many":
                span = reference.positional[len(params)]
            elif problem.kind in ("unknown", "twice"):
                span = named_spans.get(problem.name, reference.span)
            elif kind == "call" and not reference.named and reference.kind == "inline":
                span = reference.site
            else:
                span = reference.span
            yield make("TD503", span, problem.message, fixes=_argument_fixes(ctx, reference, problem, params))


def _argument_fixes(ctx: RuleContext, reference, problem, params: list[tuple[str, bool]]) -> list[Fix]:
    """An unknown argument name → the nearest param not bound yet (safe when it is the only close
    one); unbound params → empty `<arg name>` for each, or for a ref `<input name="p"/>` (short for
    from="p") for each p the caller sees (unsafe: the value is yours),
    except a param a misspelt argument will be renamed to."""
    renames = _renames(reference, params)
    if problem.kind == "unknown":
        nearest, sure = renames.get(problem.name, (None, False))
        span = dict(reference.named).get(problem.name)
        if nearest is None or span is None or ctx.document.text[span.start:span.end] != problem.name:
            return []
        return [Fix(f"Rename argument '{problem.name}' to '{nearest}'", (TextEdit(span, nearest),), safe=sure)]
    renamed_to = {nearest for nearest, _ in renames.values()}
    # a param that is no identifier (the target's own TD105) is never written into markup here
    missing = [p for p in problem.missing if p not in renamed_to and matches(p, "identifier")]
    if problem.kind != "missing" or not missing or reference.kind == "inline":
        return []
    element = ctx.document.element_at(reference.site.start)
    if element is None or element.name_span != reference.site:
        return []
    names = ", ".join(missing)
    if reference.kind == "call":
        edit = append_child_edit(ctx.document, element, "".join(f'<arg name="{p}"></arg>' for p in missing))
        return [Fix(f"Add an argument for {names}", (edit,), safe=False)] if edit else []
    # <input name="p"/> is short for from="p" (§17): written only for a p the caller sees, so the fix checks
    visible = ctx.model.scopes.names(element)
    missing = [p for p in missing if p in visible]
    if not missing:
        return []
    names = ", ".join(missing)
    inputs = "".join(f'<input name="{p}"/>' for p in missing)
    block = element.child("inputs")
    edit = (append_child_edit(ctx.document, block, inputs) if block is not None
            else append_child_edit(ctx.document, element, f"<inputs>{inputs}</inputs>"))
    return [Fix(f"Add an input for {names}", (edit,), safe=False)] if edit else []


def _renames(reference, params: list[tuple[str, bool]]) -> dict[str, tuple[str | None, bool]]:
    """Each named argument the target lacks → (the nearest param nothing binds yet, only close one)."""
    known = [p for p, _ in params]
    bound = {name for name, _ in reference.named} | set(known[:len(reference.positional)])
    free = [p for p in known if p not in bound and matches(p, "identifier")]
    return {name: _nearest_param(name, free) for name, _ in reference.named if name not in known}


def _nearest_param(name: str, free: list[str]) -> tuple[str | None, bool]:
    """The schema's nearest name; for a short name (`bb` for `b`, too short for its ratio) the one
    free param a single key away, as an unsafe guess."""
    nearest, sure = nearest_name(name, free)
    if nearest is not None:
        return nearest, sure
    close = [p for p in free if typo_distance(name, p) == 1]
    return (close[0], False) if len(close) == 1 else (None, False)


# --------------------------------------------------------------------------- TD504


@rule("TD504", Severity.WARNING, "reference cycle",
      what="A task or template reaches itself through refs and calls (a → b → a), across files or in one. "
           "It is an error when no `<cond>` lies on the cycle's path (the recursion cannot end), a warning "
           "when one does (a case may stop it). Each reference on the cycle is reported; a cycle of more than "
           "6 names is written out once, at its first member by name, and the others point there "
           "(`t97 → t98 → … → t97 (300 names; the whole cycle is shown at 't1')`).",
      why="Without a `<cond>` that stops it, the run recurses until it fails (RESOURCE_EXHAUSTION at 50 "
          "nested calls): the run refuses such a cycle before it starts. Intentional recursion is rare; "
          "the warning shows the path of a guarded one so you can check it.",
      bad='<template name="a"><task ref="b"/></template>\n<!-- elsewhere -->\n<template name="b"><task ref="a"/></template>',
      good='<template name="a"><task ref="b"/></template>\n<template name="b"><task><description>…</description></task></template>',
      fix="Break the cycle: call a different template, or guard the recursive step with a `<cond>`.")
def reference_cycle(ctx: RuleContext):
    view = _view(ctx)
    if not any(r.owner for r in view.index.references):
        return
    graph = view.graph()
    for reference in view.index.references:
        if reference.owner is None:
            continue
        target = view.target(reference)
        if target is None or not graph.on_cycle(reference.owner, target.name):
            continue
        cycle = _shown_cycle(graph, graph.cycle_path(reference.owner, target.name))
        if reference.guarded or not _unguarded_path(view, target.name, reference.owner):
            yield make("TD504", reference.span, f"reference cycle: {cycle} (guarded by a <cond>)")
        else:
            yield make("TD504", reference.span, f"reference cycle: {cycle}, with no <cond> on its "
                       "path: the run cannot end; guard the recursive step with a <cond> or break the cycle",
                       severity=Severity.ERROR)


#: a cycle of more names than this is written out once, at its first member by name; every other
#: member's diagnostic points there (a ring of 300 templates is one long message, not 300)
MAX_CYCLE_SHOWN = 6


def _shown_cycle(graph, cycle: list[str]) -> str:
    members = cycle[:-1]
    if len(members) <= MAX_CYCLE_SHOWN:
        return " → ".join(cycle)
    first = min(graph.members[graph.component[cycle[0]]]) if graph.component.get(cycle[0]) is not None else min(members)
    if cycle[0] == first:
        return " → ".join(cycle)
    return (f"{cycle[0]} → {cycle[1]} → … → {cycle[0]} ({len(members)} names; the whole cycle is shown at "
            f"'{first}')")


def _unguarded_path(view: _View, start: str, goal: str) -> bool:
    """Whether `goal` is reached from `start` through references no <cond> guards."""
    seen, queue = {start}, [start]
    for name in queue:
        if name == goal:
            return True
        for reference in _references_of(view, name):
            if reference.guarded:
                continue
            target = view.target(reference)
            if target is not None and target.name not in seen:
                seen.add(target.name)
                queue.append(target.name)
    return False


def _references_of(view: _View, owner: str) -> list[Reference]:
    "The references in the body of the definitions named `owner` (this document's own first)."
    found = [r for r in view.index.references if r.owner == owner]
    if view.library is not None:
        for definition in view.library.named(owner):
            if definition.path == view.path or definition.path is None:
                continue
            other = view.library.file_index(definition.path)
            found += [r for r in (other.references if other else ()) if r.owner == owner]
    return found
