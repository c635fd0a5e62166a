"""Text for a terminal: what a terminal would act on rather than show is written as an escape.

C0 and C1 controls and DEL (ESC moves the cursor and erases, CR and BS overwrite, LF starts a line
of its own) and the bidirectional controls (they reorder what follows); TAB only moves to the next
stop. Every line taskdsl prints from something it did not write itself (a file or folder name, a
model's name or answer, a template's attribute, a command) goes through `shown`: the plan and its
question, a batch's progress lines, `taskdsl check`'s messages."""

from __future__ import annotations

_HIDDEN_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def acts_on_terminal(char: str) -> bool:
    code = ord(char)
    return (code < 32 and char != "\t") or 0x7f <= code <= 0x9f or char in _HIDDEN_BIDI


def shown(line: str) -> str:
    """line with each character a terminal would act on written as its escape (\\x1b, \\r, \\n, \\u202e)."""
    if all(not acts_on_terminal(c) for c in line):
        return line
    return "".join(repr(c)[1:-1] if acts_on_terminal(c) else c for c in line)


def shown_text(text: str) -> str:
    "text of many lines as `shown` writes each line: its line breaks kept, every other control escaped."
    return "\n".join(shown(line) for line in text.split("\n"))


def for_output(text: str, stream) -> str:
    """What a command prints on its standard output from something it did not write (a model's answer,
    a script's output, a model-written template): as it is when stdout is a file or a pipe (the bytes a
    program reading it wants), `shown_text` on a terminal, where an escape in it would act (OSC 52
    sets the clipboard, CSI clears the screen and moves the cursor to write over what was shown)."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return shown_text(text) if terminal else text
