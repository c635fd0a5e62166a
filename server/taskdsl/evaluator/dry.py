"""A dry run: the run's own evaluation with its effects left out (`taskdsl render`, the editor's
preview). It walks the very nodes a run walks (`runner.dry_run`), so the prompts it records are
built by the one prompt builder (`Atomic.prompt`) from the values the run would have there:

- an atomic task records the messages it would send (`Sent`) instead of calling its model, and
  its output becomes a marked placeholder naming where it comes from;
- a script (a step, an inline call's, a command listing `file_paths`) is not started: its output
  (and, for a step, its notes) is such a placeholder;
- a `<cond>` whose tested output only a run knows records every case's prompts (each at its own
  `case[n]` path) and its output is a placeholder;
- a value built from a placeholder (a field of it, a file at a path holding one, the memory's
  matches for a text holding one) is a placeholder too.

A placeholder reads `{{run: …}}`: it never holds `{`, `}` or a line break, so it is found in a
prompt by `MARKER`, and it stands for exactly the text the run puts there (the context a
sequential or a reduce passes on is built around it as the run builds it). One ending in
`, if any}}` (`optional`) stands for a block the run may leave out: the block with the separator
that joins it to its neighbour, or nothing (`joined` glues it to that neighbour).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKER = re.compile(r"\{\{run: [^{}\n]*\}\}")


@dataclass(frozen=True)
class Sent:
    """One model call of a dry run: the messages, at the step path the run's trace names."""
    path: str
    model: str
    system: str
    user: str


def mark(what: str) -> str:
    "The placeholder of a value only a run knows, saying where it comes from."
    cleaned = " ".join(what.replace("{", "(").replace("}", ")").split())
    return "{{run: " + cleaned + "}}"


IF_ANY = ", if any"
OPTIONAL = re.compile(r"(?:\{\{run: [^{}\n]*" + re.escape(IF_ANY) + r"\}\})+")


def optional(what: str) -> str:
    "The placeholder of a block the run may leave out (with its separator)."
    return mark(what.removesuffix(IF_ANY) + IF_ANY)


def is_optional(text) -> bool:
    "Whether `text` is only blocks the run may leave out."
    return isinstance(text, str) and OPTIONAL.fullmatch(text) is not None


def joined(parts, separator: str) -> str:
    """`separator.join` of the non-empty parts, as the run joins them, where a part that the run
    may leave out (`optional`) is glued to its neighbour: it stands for the separator and the
    block, or for nothing. Without such parts, exactly `separator.join`."""
    out, pending = None, ""
    for part in parts:
        if not part:
            continue
        if is_optional(part):
            if out is None:
                pending += part  # before the first part: glued to its front
            else:
                out += part
        elif out is None:
            out = pending + part
        else:
            out += separator + part
    return out if out is not None else pending


def holds_marker(value) -> bool:
    return isinstance(value, str) and MARKER.search(value) is not None


def described(value: str) -> str:
    "What a placeholder value says it is (its inner text), for a placeholder built from it."
    found = MARKER.search(value)
    return found.group(0)[len("{{run: "):-2] if found else value


class RunOnlyNotes(dict):
    """The notes of a dry step (a script's stdout, stderr, exit code): what an accumulating
    sequential passes on of them is `marker`, standing for their JSON as the run writes it."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker
        self.optional = is_optional(marker)  # the run may have no notes to pass on: no line at all


@dataclass
class DryRun:
    sent: list[Sent] = field(default_factory=list)
