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


# Unicode 15.1 DerivedCoreProperties.txt, Default_Ignorable_Code_Point: the whole set, as Unicode lists it
DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                     (0x180B, 0x180D), (0x180E, 0x180E), (0x180F, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
                     (0x2060, 0x2064), (0x2065, 0x2065), (0x2066, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F),
                     (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
                     (0xE0000, 0xE0000), (0xE0001, 0xE0001), (0xE0002, 0xE001F), (0xE0020, 0xE007F),
                     (0xE0080, 0xE00FF), (0xE0100, 0xE01EF), (0xE01F0, 0xE0FFF))


def test_every_default_ignorable_code_point_and_c1_control_between_a_secrets_characters_is_masked():
    """A list of some invisible characters left the others: a script printing the key joined by U+E0020 (a tag
    character) showed it in clear on a terminal. Every Default_Ignorable_Code_Point is taken, and the C1 controls."""
    from taskdsl.support.redaction import Redactor

    redactor = Redactor([SECRET])
    points = [p for low, high in DEFAULT_IGNORABLE for p in range(low, high + 1)] + list(range(0x80, 0xA0))
    assert len(points) == 4174 + 32
    left = [hex(p) for p in points if redactor.text(f"before {chr(p).join(SECRET)} after") != "before *** after"]
    assert left == []
    # the 8-bit CSI and OSC introducers: a sequence on a terminal reading 8-bit controls, nothing on one reading UTF-8
    assert redactor.text(f"a {SECRET[:5]}\x9b31m{SECRET[5:]} b") == "a *** b"
    assert redactor.text(f"a {SECRET[:5]}\x9d0;title\x07{SECRET[5:]} b") == "a *** b"
    assert redactor.text("caf\u00e9 \u3042 \U0001f600 stay") == "caf\u00e9 \u3042 \U0001f600 stay"  # visible: kept
