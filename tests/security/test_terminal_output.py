"""What a command prints on stdout from something it did not write (a model's answer, a script's output,
a model-written template) cannot act on the user's terminal: on a terminal, every control but the line
break and the tab is written as its escape (an OSC 52 sequence would set the clipboard, CSI 2J clear the
screen to show spoofed text); into a pipe or a file it is the bytes as they are, for the program that
reads them."""

import os
import pty
import subprocess
import sys

ANSWER = "hi\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2Jspoof\r\nsecond line\tend"
TASK = '<task name="e"><instructions>{{x}}</instructions><inputs><input name="x"/></inputs></task>\n'


def run(folder, stdout):
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    return subprocess.Popen([sys.executable, "-m", "taskdsl", "run", "e.task.xml", "--model", "taskdsl/echo",
                             "--input", f"x={ANSWER}", "-q"], cwd=folder, env=environment, stdout=stdout,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


def test_an_answer_printed_on_a_terminal_cannot_act_on_it(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "e.task.xml").write_text(TASK, encoding="utf-8")
    main, side = pty.openpty()
    process = run(tmp_path, side)
    os.close(side)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(120) == 0
    os.close(main)
    text = shown.decode("utf-8").replace("\r\n", "\n")  # the terminal's own line ending
    assert "\x1b" not in text and "\x07" not in text
    assert text == "hi\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2Jspoof\\r\nsecond line\tend\n"


def test_an_answer_piped_is_the_bytes_as_they_are(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "e.task.xml").write_text(TASK, encoding="utf-8")
    process = run(tmp_path, subprocess.PIPE)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    assert out.decode("utf-8") == ANSWER + "\n"
