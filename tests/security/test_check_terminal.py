"""`taskdsl check` prints messages that quote the file's own text (an attribute's value, a name): a
character a terminal would act on (CR, ESC, a C1 control, a bidirectional override) is printed as its
escape, so a template cannot overwrite its own error line or fake a clean summary on the terminal."""

from __future__ import annotations

import subprocess
import sys


def test_a_message_quoting_controls_shows_them_escaped(tmp_path):
    (tmp_path / "a.task.xml").write_text(
        '<task name="t&#13;FAKE: 0 errors, 0 warnings in 1 file&#13;&#x9b;2K&#x202e;" type="bogus">'
        '<description>x</description></task>\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "check", "a.task.xml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert not any(c in done.stdout for c in "\r\x9b\u202e")
    [line] = [line for line in done.stdout.splitlines() if " TD105 " in line]
    assert line.startswith("a.task.xml:1:13: error TD105 't\\rFAKE: 0 errors, 0 warnings in 1 file\\r\\x9b2K\\u202e' "
                           "is not valid for attribute 'name' of <task>")
