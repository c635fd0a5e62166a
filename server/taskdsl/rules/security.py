"""Running safely (TD801, TD802): what the runner would refuse, reported while editing.

TD801 asks taskdsl.language.shell where each {{…}} of a <command> sits in the shell's quoting; TD802 asks
taskdsl.project.confine whether a listed file may be read. The runner asks the same functions.
"""

from __future__ import annotations

import os

from taskdsl.project import confine

from taskdsl.language import shell
from taskdsl.language.diagnostics import Fix, Severity, TextEdit
from taskdsl.language.document import Element, Span
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import make, raw_offsets, text_span


def _offsets(element: Element) -> list[tuple[int, int]]:
    """For each character of element.text: its (start, end) in the document."""
    spans: list[tuple[int, int]] = []
    for piece in element.text_pieces:
        if piece.cdata:  # only line ends are decoded: a CR LF is one LF
            raw = piece.raw
            spans.extend((piece.start + i, piece.start + i + (2 if raw[i:i + 2] == "\r\n" else 1))
                         for i in range(len(raw)) if not (raw[i] == "\n" and i and raw[i - 1] == "\r"))
        else:
            spans.extend((piece.start + a, piece.start + b) for a, b in raw_offsets(piece.raw))
    return spans


@rule("TD801", Severity.ERROR, "{{…}} where a shell command cannot take a value safely",
      what="A `{{…}}` of a `<command>` sits where the shell expands nothing (inside '…', in a here-document "
           "with a quoted delimiter or in its delimiter word) or where a value would join shell syntax "
           "(right after a backslash or '$', inside ${…} or $((…))).",
      why="Values are never pasted into a command: each becomes a reference to an environment variable "
          "holding it, in the form its quoting needs, so no input, file or model answer can become shell "
          "syntax. Where no reference expands, the value cannot be substituted safely and the run refuses.",
      bad="<command>grep '{{pattern}}' notes.txt</command>",
      good="<command>grep {{pattern}} notes.txt</command>  (or: grep \"$TASKDSL_INPUT_PATTERN\" notes.txt)",
      fix="Close the single quotes around the placeholder ('…'{{x}}'…'), unquote the here-document's "
          "delimiter, or read the value from $TASKDSL_INPUT_<NAME> in the script.",
      tags=("command",))
def unsafe_substitution_rule(ctx: RuleContext):
    for command in ctx.tagged("command"):
        text = command.text
        if "{{" not in text:
            continue
        unsafe = shell.unsafe_sites(text)
        if not unsafe:
            continue
        offsets = _offsets(command)
        for site in unsafe:
            ph = site.placeholder
            span = Span(offsets[ph.start][0], offsets[ph.end - 1][1])
            fixes = []
            if site.context == "single":  # not applied by --fix: inside an awk or jq program the value would be code
                written = ctx.document.text[span.start:span.end]
                fixes.append(Fix(f"Close the quotes around {written}", (TextEdit(span, f"'{written}'"),), safe=False))
            yield make("TD801", span, shell.unsafe_message(site), fixes=fixes)


@rule("TD802", Severity.WARNING, "file outside the project",
      what="A `<path>` of `<file_paths>` names a file outside the project (the nearest folder upward with "
           "taskdsl.toml, pyproject.toml or .git), through `..`, an absolute path or a symbolic link, or a "
           "file under /proc, /sys or /dev.",
      why="File contents are sent to a model. A run reads only inside the project unless a folder is "
          "allowed on purpose, and never /proc, /sys or /dev (process environments, devices): the run "
          "refuses such a path.",
      bad="<file_paths><path>../../.ssh/id_rsa</path></file_paths>",
      good="<file_paths><path>docs/notes.md</path></file_paths>",
      fix="Copy the file into the project, or allow its folder: --allow-read FOLDER on `taskdsl run`, "
          "`allow_read` in the [run] table of taskdsl.toml, or the editor setting taskdsl.run.allowRead.",
      tags=("file_paths",))
def read_outside_rule(ctx: RuleContext):
    folder = os.path.dirname(os.path.abspath(ctx.path)) if ctx.path else None
    allowed = ctx.settings.run_allow_read
    for file_paths in ctx.tagged("file_paths"):
        for path in file_paths.children_named("path"):
            written = path.text.strip()
            if not written or "{{" in written or (folder is None and not os.path.isabs(written)):
                continue  # known only when the task runs: the runner asks then
            full = os.path.join(folder or "/", written)
            root = confine.project_root(ctx.path) if ctx.path else os.path.dirname(full)
            refusal = confine.read_refusal(full, root, allowed)
            if refusal:
                yield make("TD802", text_span(path) or path.name_span,
                           f"a run refuses to read this file: {refusal}")
