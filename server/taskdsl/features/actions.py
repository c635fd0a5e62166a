"""Code actions: the rules' quick fixes, and "Extract inline task to a library template".

Quick fixes come from the checker's diagnostics (``Diagnostic.fixes``): each becomes a
``quickfix`` action with its exact edits and the diagnostic it fixes attached (the client's own
copy when it sent one, so the editor can link them).

"Fix all safe problems" (kind ``source.fixAll.taskdsl``, offered when the client asks for source
or fixAll actions, as on save) is the fixer `taskdsl check --fix` uses (``fixer.fix_text``),
as one edit of the changed region.

Extraction takes an inline ``<task>`` (a step, an input's or arg's value, a case's task) into a
new file ``<name>.task.xml`` beside the document and replaces it with
``<task ref="name">`` carrying the task's ``<inputs>`` (they become the new task's params, their
literal values its defaults). The names the task took from around it (``{{url}}`` of the enclosing
task, ``last_output`` of the step before, an ``<arg>`` naming a variable) become params too, and
the ref binds each with ``from``, so the extracted task checks clean and runs as before. With a client that supports ``CreateFile`` resource operations
the whole change is one ``WorkspaceEdit``; otherwise the action carries the command
``taskdsl.extractTask`` and the server writes the new file itself (never over an existing one)
and applies the document edit with ``workspace/applyEdit``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from taskdsl.language.diagnostics import Diagnostic
from taskdsl.language.document import Document, Element, Span, parse
from taskdsl.features import libview
from taskdsl.features.util import ClientFeatures, Positions, path_to_uri

EXTRACT_COMMAND = "taskdsl.extractTask"
EXTRACT_TITLE = "Extract inline task to a library template"
_INLINE_PARENTS = ("steps", "input", "arg", "case", "default")


def _overlaps(a: Span, b: Span) -> bool:
    return a.start <= b.end and b.start <= a.end


def quick_fixes(diagnostics: list[Diagnostic], span: Span, positions: Positions, uri: str,
                client_diagnostics: list[types.Diagnostic], lsp_of, client: ClientFeatures,
                version: int | None) -> list[types.CodeAction]:
    actions = []
    for diagnostic in diagnostics:
        if not diagnostic.fixes or not _overlaps(diagnostic.span, span):
            continue
        lsp_range = positions.range(diagnostic.span)
        attached = next((d for d in client_diagnostics if d.code == diagnostic.code and d.range == lsp_range), None)
        attached = attached or lsp_of(diagnostic)
        for index, fix in enumerate(diagnostic.fixes):
            edits = [types.TextEdit(positions.range(e.span), e.new_text) for e in fix.edits]
            actions.append(types.CodeAction(
                title=fix.title, kind=types.CodeActionKind.QuickFix, diagnostics=[attached],
                is_preferred=index == 0 and len(diagnostic.fixes) == 1,
                edit=_edit({uri: edits}, client, version),
            ))
    return actions


def _edit(edits: dict[str, list[types.TextEdit]], client: ClientFeatures, version: int | None) -> types.WorkspaceEdit:
    if client.document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), file_edits)
            for uri, file_edits in edits.items()])
    return types.WorkspaceEdit(changes=edits)


# -- extraction --------------------------------------------------------------------------------


def inline_task_at(doc: Document, offset: int) -> Element | None:
    """The innermost inline task (not a root, not a ref, not inner/reduction) around the offset."""
    element = doc.element_at(offset)
    while element is not None:
        if element.tag == "task" and element.parent is not None and element.parent.tag in _INLINE_PARENTS \
                and not element.get("ref") and element.closed:
            return element
        element = element.parent
    return None


@dataclass(frozen=True)
class Extraction:
    name: str
    path: str  # the new file
    text: str  # its content
    replace: Span  # the inline task in the document
    replacement: str


def plan_extraction(doc: Document, task: Element, path: str, library=None) -> Extraction:
    folder = Path(path).parent
    base = task.get("name") or "extracted_task"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", base):
        base = "extracted_task"
    taken = {entry.name for entry in libview.entries(library)}
    name, counter = base, 1
    while name in taken or (folder / f"{name}.task.xml").exists():
        counter += 1
        name = f"{base}_{counter}"
    source = doc.text[task.span.start:task.span.end]
    named = _named(source, task, name)
    free = free_variables(doc, task, named)
    inputs = task.child("inputs")
    if free:
        # the names the task took from around it become its params, and the ref passes them on
        named = _named(_with_items(source, task, inputs, [f'<input name="{n}"/>' for n in free], task.span.start),
                       task, name)
    text = _reindent(named) + "\n"
    if free:
        bindings = [f'<input name="{n}" from="{n}"/>' for n in free]
        opening = f'<task ref="{name}">'
        ref = f'{opening}\n{doc.text[inputs.span.start:inputs.span.end]}\n</task>' if inputs is not None else f'{opening}\n</task>'
        base = inputs.span.start - len(opening) - 1 if inputs is not None else 0
        replacement = _indent_after_first(_reindent(_with_items(ref, None, inputs, bindings, base)),
                                          _line_indent(doc, task.span.start))
    elif inputs is not None:
        inputs_text = doc.text[inputs.span.start:inputs.span.end]
        replacement = f'<task ref="{name}">{_between(doc, task, inputs)}{inputs_text}{_after(doc, task, inputs)}</task>'
    else:
        replacement = f'<task ref="{name}"/>'
    return Extraction(name, str(folder / f"{name}.task.xml"), text, task.span, replacement)


def _named(source: str, task: Element, name: str) -> str:
    """The task's text with its name: the new root task is registered under it."""
    if task.get("name") is not None:
        return source
    cut = task.name_span.end - task.span.start
    return f'{source[:cut]} name="{name}"{source[cut:]}'


def free_variables(doc: Document, task: Element, source: str) -> list[str]:
    """The names the inline task uses that its surroundings bind: once it stands alone in its own file
    (``source``) they would name nothing (TD402), and an ``<arg>`` naming one would turn literal.
    Asked of the semantic model of both texts; the two trees have the same elements in the same order."""
    from taskdsl.meaning.model import FileModel

    here, alone = FileModel(doc), FileModel(parse(source))
    if alone.root is None:
        return []
    original = dict(zip(alone.root.iter(), task.iter()))
    free = [p.use.name for p in alone.variable_problems()
            if p.use.element in original and p.use.name in here.scopes.names(original[p.use.element])]
    free += [arg.text.strip() for arg in alone.elements("arg")
             if arg in original and here.arg_is_variable(original[arg]) and not alone.arg_is_variable(arg)]
    return sorted(set(free))


def _with_items(source: str, task: Element | None, inputs: Element | None, items: list[str], base: int) -> str:
    """``source`` with ``items`` (one a line) added at the end of its ``<inputs>`` (``inputs`` sits at its
    document offset - ``base``), or in a new ``<inputs>`` as the first child of the task; the caller re-indents."""
    lines = "".join(f"\n{item}" for item in items)
    if inputs is not None and inputs.end_tag is not None:
        at = len(source[:inputs.end_tag.start - base].rstrip())
        return source[:at] + lines + source[at:]
    if inputs is not None:  # <inputs/>
        return source[:inputs.span.start - base] + f"<inputs>{lines}\n</inputs>" + source[inputs.span.end - base:]
    at = source.index(">") + 1 if task is None else task.start_tag_end - base
    return source[:at] + f"\n<inputs>{lines}\n</inputs>" + source[at:]


def _line_indent(doc: Document, offset: int) -> str:
    line_start = doc.line_starts[doc.position(offset)[0]]
    before = doc.text[line_start:offset]
    return before if not before.strip() else ""


def _indent_after_first(text: str, indent: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(indent + line if line.strip() else line for line in rest)])


def _between(doc: Document, task: Element, inputs: Element) -> str:
    """The whitespace before <inputs> in the original (keeps the document's layout)."""
    line_start = doc.line_starts[doc.position(inputs.span.start)[0]]
    before = doc.text[line_start:inputs.span.start]
    return "\n" + before if not before.strip() and doc.position(inputs.span.start)[0] != doc.position(task.span.start)[0] else ""


def _after(doc: Document, task: Element, inputs: Element) -> str:
    if task.end_tag is None:
        return ""
    line_start = doc.line_starts[doc.position(task.end_tag.start)[0]]
    before = doc.text[line_start:task.end_tag.start]
    return "\n" + before if not before.strip() and doc.position(task.end_tag.start)[0] != doc.position(inputs.span.end)[0] else ""


def _reindent(source: str) -> str:
    from taskdsl.language.diagnostics import TextEdit, apply_edits
    from taskdsl.features.formatting import indentation_edits

    doc = parse(source)
    return apply_edits(source, [TextEdit(span, text) for span, text in indentation_edits(doc)])


def extract_action(doc: Document, positions: Positions, uri: str, offset: int, path: str | None,
                   client: ClientFeatures, version: int | None, library=None) -> types.CodeAction | None:
    if not path:
        return None
    task = inline_task_at(doc, offset)
    if task is None:
        return None
    plan = plan_extraction(doc, task, path, library)
    new_uri = path_to_uri(plan.path)
    replace = types.TextEdit(positions.range(plan.replace), plan.replacement)
    if client.create_files:
        edit = types.WorkspaceEdit(document_changes=[
            types.CreateFile(uri=new_uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=new_uri, version=None),
                                   [types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), plan.text)]),
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), [replace]),
        ])
        return types.CodeAction(title=f"{EXTRACT_TITLE} ({Path(plan.path).name})",
                                kind=types.CodeActionKind.RefactorExtract, edit=edit)
    return types.CodeAction(
        title=f"{EXTRACT_TITLE} ({Path(plan.path).name})", kind=types.CodeActionKind.RefactorExtract,
        command=types.Command(title=EXTRACT_TITLE, command=EXTRACT_COMMAND,
                              arguments=[uri, version, task.span.start]),
    )


FIX_ALL_KIND = "source.fixAll.taskdsl"
FIX_ALL_TITLE = "Fix all safe problems (taskdsl)"


def fix_all_action(doc: Document, positions: Positions, uri: str, *, client: ClientFeatures | None = None,
                   version: int | None = None, path: str | None = None, library=None, settings=None
                   ) -> types.CodeAction | None:
    """The fixer's result for the whole document as one edit (None when nothing is fixable)."""
    from taskdsl.rules.fixer import fix_text

    fixed = fix_text(doc.text, path=path, library=library, settings=settings)
    if not fixed.applied or fixed.text == doc.text:
        return None
    old, new = doc.text, fixed.text
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    edit = types.TextEdit(positions.range(Span(start, end_old)), new[start:end_new])
    return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND,
                            edit=_edit({uri: [edit]}, client or ClientFeatures(), version))


def code_actions(doc: Document, positions: Positions, uri: str, range_: types.Range, diagnostics: list[Diagnostic],
                 context: types.CodeActionContext, *, client: ClientFeatures | None = None, version: int | None = None,
                 path: str | None = None, library=None, lsp_of=None, settings=None) -> list[types.CodeAction]:
    client = client or ClientFeatures()
    span = positions.span(range_)
    only = context.only or None

    def wanted(kind: str) -> bool:  # lsprotocol gives enum members: compare their values
        asked = [getattr(k, "value", k) for k in only or ()]
        return only is None or any(kind == k or kind.startswith(f"{k}.") for k in asked)

    actions: list[types.CodeAction] = []
    if wanted(types.CodeActionKind.QuickFix):
        lsp_of = lsp_of or (lambda d: types.Diagnostic(range=positions.range(d.span), message=d.message,
                                                       code=d.code, source="taskdsl"))
        actions += quick_fixes(diagnostics, span, positions, uri, list(context.diagnostics or []), lsp_of, client, version)
    if only is not None and wanted(FIX_ALL_KIND):  # asked for (source actions, fix on save): it checks again
        action = fix_all_action(doc, positions, uri, client=client, version=version, path=path, library=library,
                                settings=settings)
        if action is not None:
            actions.append(action)
    if wanted(types.CodeActionKind.RefactorExtract):
        action = extract_action(doc, positions, uri, span.start, path, client, version, library)
        if action is not None:
            actions.append(action)
    if only is None:  # "Run task" everywhere: the way to run in clients without code lens
        from taskdsl.features.run import run_code_actions

        actions += run_code_actions(doc, uri, range_, positions, path)
    return actions
