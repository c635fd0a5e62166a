"""The command line's consent question on a real terminal (a pseudo-terminal): `taskdsl run`,
`taskdsl test` and `taskdsl ask` each show the plan of a run the project's own taskdsl.toml widens and
ask `Run it? [y/N]`; a yes runs it, anything else refuses it, as without a terminal and --yes."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def on_terminal(cwd, *args: str, typed: str) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal showed) of `taskdsl ARGS` whose stdin and stderr are a
    terminal where the user typed `typed`."""
    master, slave = pty.openpty()
    environment = {**os.environ}
    environment.pop("TASKDSL_MODEL", None)
    process = subprocess.Popen([sys.executable, "-m", "taskdsl", *args], cwd=cwd, env=environment, stdin=slave,
                               stdout=subprocess.PIPE, stderr=slave, close_fds=True)
    os.close(slave)
    shown = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other side closed: the process is done
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    os.write(master, typed.encode())  # the line waits in the terminal until the question reads it
    out, _ = process.communicate(timeout=300)
    reader.join(timeout=60)
    os.close(master)
    return process.returncode, out.decode(), b"".join(shown).decode(errors="replace").replace("\r\n", "\n")


def project(tmp_path):
    """A project whose taskdsl.toml allows a folder outside it, a template that reads a file there,
    a test of it, and the library template `taskdsl ask` picks for a request about notes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("outside notes\n", encoding="utf-8")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "taskdsl.toml").write_text(f'[run]\nallow_read = ["{outside}"]\n', encoding="utf-8")
    (folder / "r.task.xml").write_text(
        f'<task name="r"><description>Read</description><file_paths><path>{outside}/notes.txt</path>'
        '</file_paths></task>\n', encoding="utf-8")
    (folder / "r.test.xml").write_text(
        '<tests><test name="reads" task="r"><expect test="true"/></test></tests>\n',
        encoding="utf-8")
    (folder / "notes.task.xml").write_text(
        '<template name="summarise_notes" params="text"><task><description>Summarise the shared notes for {{text}}'
        f'</description><file_paths><path>{outside}/notes.txt</path></file_paths></task></template>\n',
        encoding="utf-8")
    return folder, outside


QUESTION = "\nRun it? [y/N] "


@pytest.mark.parametrize("command", [
    ("run", "r.task.xml", "--model", "taskdsl/echo"),
    ("test", "r.test.xml"),
    ("ask", "summarise the shared notes", "--model", "taskdsl/echo", "--allow-reads"),
], ids=["run", "test", "ask"])
def test_a_widened_run_asks_on_a_terminal_and_runs_only_after_a_yes(tmp_path, command):
    folder, outside = project(tmp_path)
    code, out, shown = on_terminal(folder, *command, typed="y\n")
    assert code == 0, (out, shown)
    assert "  with what the project's configuration widens (it applies only if you agree):\n" in shown
    assert f"    [run] allow_read = {outside}\n" in shown
    assert QUESTION in shown
    ran = {"run": "Read\n", "test": "1 passed", "ask": "Summarise the shared notes for"}[command[0]]
    assert ran in out  # it ran, reading the file outside
    code, out, shown = on_terminal(folder, *command, typed="n\n")
    assert QUESTION in shown
    assert code != 0
    # the answer was no: the refusal says so (not "read the plan", which was just shown)
    refusal = (f"not run: you did not agree to its plan, which the project's taskdsl.toml widens ([run] allow_read "
               f"{outside})")
    assert refusal in out + shown
    assert ran not in out


def test_without_a_terminal_and_without_yes_a_widened_run_is_refused_unasked(tmp_path):
    folder, outside = project(tmp_path)
    for command in (("test", "r.test.xml"), ("ask", "summarise the shared notes", "--model", "taskdsl/echo", "--allow-reads")):
        done = subprocess.run([sys.executable, "-m", "taskdsl", *command], cwd=folder, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0
        assert "Run it?" not in done.stderr
        assert "widens what this run may do ([run] allow_read" in done.stdout + done.stderr


def test_taskdsl_test_asks_once_for_one_plan_run_twice(tmp_path):
    folder, _ = project(tmp_path)
    code, out, shown = on_terminal(folder, "test", "r.test.xml", "--repeat", "2", typed="y\n")
    assert code == 0, (out, shown)
    assert shown.count(QUESTION) == 1


def test_yes_and_y_agree_without_a_question(tmp_path):
    folder, _ = project(tmp_path)
    for flag in ("--yes", "-y"):
        code, out, shown = on_terminal(folder, "ask", "summarise the shared notes", "--model", "taskdsl/echo", "--allow-reads", flag,
                                       typed="n\n")
        assert code == 0, (out, shown)
        assert "Run it?" not in shown


def test_a_failing_scripts_stderr_reaches_the_terminal_escaped(tmp_path):
    """The run's error line quotes the script's last stderr line: a script (or what it printed from a download)
    could clear the screen or rewrite the lines above with escape sequences."""
    import subprocess
    import sys

    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "t.task.xml").write_text('<task type="script" name="t"><description>d</description>'
                                         "<command>printf 'x\\033[2J\\033[1Afake\\n' >&amp;2; exit 3</command></task>\n")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "t.task.xml", "--yes", "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "\x1b" not in done.stderr and "\r" not in done.stderr
    assert "x\\x1b[2J\\x1b[1Afake" in done.stderr
