"""Shared helpers of the evaluator tests: write a template, run it, collect events."""

import asyncio
import os
import subprocess
import sys
import textwrap

from taskdsl.evaluator.runner import run_file


def write(folder, name, xml):
    path = os.path.join(str(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(xml).strip() + "\n")
    return path


async def run(folder, xml, name="t.task.xml", **kwargs):
    events = []
    kwargs.setdefault("model", "taskdsl/echo")
    result = await run_file(write(folder, name, xml), on_event=events.append, **kwargs)
    return result, events


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # the process exited meanwhile (ESRCH on read)
        return False


def group_alive(pgid, grace=2.0):
    "Whether any live process remains in the group (SIGKILL delivery is asynchronous: allow a grace period)."
    import time
    deadline = time.monotonic() + grace
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _group_alive(pgid)


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return any(pid_alive(int(p)) for p in os.listdir("/proc") if p.isdigit() and _pgid(int(p)) == pgid)


def _pgid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().split(")")[1].split()[3])
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):  # exited meanwhile: ESRCH on read
        return None


def run_python(code: str, **kwargs) -> subprocess.CompletedProcess:
    "Run code in a fresh interpreter (what it imports is its own): stdout, stderr, exit code."
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, **kwargs)


async def taskdsl_async(folder, *args):
    """The command line (`python -m taskdsl ARGS` in `folder`) while this test's event loop serves the
    loopback model: (exit code, stdout, stderr)."""
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "taskdsl", *args, cwd=folder, env=environment,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 300)
    return process.returncode, out.decode(), err.decode()
