"""A timeout kills a script whole: its process group, and children that left it with setsid."""

import os
import subprocess
import sys
import time


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_that_called_setsid_does_not_survive_the_timeout(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "s.task.xml").write_text(
        '<task type="script" name="s"><command>setsid sh -c \'echo $$ > escaped.pid; exec sleep 600\' '
        '&lt;/dev/null &gt;/dev/null 2&gt;&amp;1 &amp; '
        'while [ ! -s escaped.pid ]; do sleep 0.05; done; sleep 60</command></task>\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "s.task.xml", "--timeout", "3"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert "RESOURCE_EXHAUSTION (timeout)" in done.stderr
    pid = int((tmp_path / "escaped.pid").read_text())
    try:
        for _ in range(50):  # SIGKILL is delivered at once; reaping by init may lag a little
            if not alive(pid):
                break
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        if alive(pid):
            os.kill(pid, 9)  # the escaped process of a failing run, by its own pid
