"""A secret interleaved with characters a terminal shows as nothing still shows as the secret: a NUL
after each character (the secret printed as UTF-16LE), zero-width characters between its
characters, DEL, a backspace overstrike (`S\\bS`, `_\\bS`). Each is masked like the ANSI-interleaved
form, in the printed output, `--json` and the trace, through the real command line."""

import json
import os
import subprocess
import sys

SECRET = "Sup3rS3cretValue"
FORMS = r'''import os, sys
s = os.environ["MY_API_KEY"]
out = sys.stdout.buffer
out.write(b"utf16 " + s.encode("utf-16-le") + b" end\n")
for name, mark in (("zwsp", "\u200b"), ("zwnj", "\u200c"), ("zwj", "\u200d"), ("wj", "\u2060"),
                   ("bom", "\ufeff"), ("del", "\x7f")):
    out.write((name + " " + mark.join(s) + " end\n").encode("utf-8"))
out.write(("bold " + "".join(c + "\b" + c for c in s) + " end\n").encode("utf-8"))
out.write(("underline " + "".join("_\b" + c for c in s) + " end\n").encode("utf-8"))
'''
LINES = ("utf16", "zwsp", "zwnj", "zwj", "wj", "bom", "del", "bold", "underline")


def on_a_terminal(text: str) -> str:
    """What a terminal shows of text: invisible characters show nothing, a backspace steps back over
    the character before it (the next one is drawn in its place)."""
    shown: list[str] = []
    for char in text:
        if char == "\b":
            if shown:
                shown.pop()
        elif char not in "\x00\x7f\u200b\u200c\u200d\u2060\ufeff":
            shown.append(char)
    return "".join(shown)


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def run(tmp_path, *args):
    env = {**os.environ, "MY_API_KEY": SECRET, "PY": sys.executable}
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "s.task.xml", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_secret_interleaved_with_invisible_characters_is_masked_everywhere(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "forms.py").write_text(FORMS, encoding="utf-8")
    (tmp_path / "s.task.xml").write_text('<task type="script" name="s"><command>"$PY" forms.py</command></task>\n',
                                         encoding="utf-8")
    printed = on_a_terminal(run(tmp_path, "--trace", "t.jsonl"))
    assert SECRET not in printed
    for name in LINES:
        assert f"{name} *** end" in printed, (name, printed)
    report = json.loads(run(tmp_path, "--json"))
    content = report["content"]
    assert SECRET not in on_a_terminal(content)
    assert on_a_terminal(content).count("*** end") == len(LINES)
    assert all(SECRET not in on_a_terminal(s) for s in strings(report))
    trace = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [on_a_terminal(s) for event in trace for s in strings(event)]
    assert all(SECRET not in s for s in texts)
    assert sum(s.count("*** end") for s in texts) >= len(LINES)


def test_each_invisible_interleaving_is_masked_in_process():
    from taskdsl.support.redaction import Redactor

    redactor = Redactor([SECRET])
    forms = {
        "utf16": "\x00".join(SECRET) + "\x00",
        "zwsp": "\u200b".join(SECRET), "zwnj": "\u200c".join(SECRET), "zwj": "\u200d".join(SECRET),
        "wj": "\u2060".join(SECRET), "bom": "\ufeff".join(SECRET), "del": "\x7f".join(SECRET),
        "bold": "".join(c + "\b" + c for c in SECRET), "underline": "".join("_\b" + c for c in SECRET),
        "mixed": "\u200b".join(SECRET[:5]) + "\x00\x1b[1m" + "\x7f".join(SECRET[5:]),
    }
    for name, form in forms.items():
        masked = redactor.text(f"before {form} after")
        assert SECRET not in on_a_terminal(masked), name
        assert on_a_terminal(masked) == "before *** after", (name, masked)
    # the overstruck first character goes with the secret, not left in front of the mask
    assert redactor.text("x " + "".join(c + "\b" + c for c in SECRET) + " y") == "x *** y"
    assert redactor.text("".join("_\b" + c for c in SECRET)) == "***"
    # a backspace that strikes over something else is left as it is
    assert redactor.text("ab\bc") == "ab\bc"
    # upper-casing is a transformation masking does not undo (docs/security.md: cannot be masked)
    assert redactor.text(SECRET.upper()) == SECRET.upper()


def test_the_other_separators_a_terminal_shows_as_nothing_are_masked_too():
    """BEL, SOH, SO/SI, the soft hyphen, the invisible times and its siblings, the combining grapheme joiner and a
    variation selector between a secret's characters showed the key on a terminal."""
    from taskdsl.support.redaction import Redactor

    redactor = Redactor([SECRET])
    for separator in ("\a", "\x01", "\x0e", "\x0f", "\x1f", "\u00ad", "\u2061", "\u2062", "\u2063", "\u2064",
                      "\u034f", "\ufe0f", "\u200e", "\u202e"):
        assert redactor.text(f"before {separator.join(SECRET)} after") == "before *** after", repr(separator)
    assert redactor.text("tab\tstays") == "tab\tstays"  # a tab shows as space: not a gap
