"""The README's first command, `bash scripts/demo`, runs every step it shows and exits 0. Its install step
is the test command's own (scripts/test made this .venv), so the test runs the rest of the script as written.
(A gate added to `taskdsl ask` once made the demo stop at its last steps with exit 4; nothing ran it.)"""

import os
import subprocess

from paths import REPO


def test_the_demo_runs_every_step_and_exits_0():
    script = (REPO / "scripts" / "demo").read_text(encoding="utf-8")
    assert "bash scripts/setup-venv.sh\n" in script
    body = script.replace("bash scripts/setup-venv.sh\n", "")
    env = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    done = subprocess.run(["bash", "-c", body, "demo"], cwd=REPO / "scripts", env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    steps = [line for line in done.stdout.splitlines() if line.startswith("== ")]
    assert steps[-1].startswith("== taskdsl run examples/replan/summarise_report.task.xml")  # the last step ran
    assert "- version 2 ships on Friday" in done.stdout  # the re-planned ask ran
    assert "Traceback" not in done.stderr
