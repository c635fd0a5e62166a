"""Script tasks: `/bin/sh -c command` in the template's folder (SPEC §7)."""

from __future__ import annotations

import asyncio
import os
import signal

from taskdsl.evaluator.results import TaskResult, failure


MARK = "TASKDSL_SCRIPT_ID"  # in every script's environment: its descendants inherit it, setsid or not


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the whole process group the script leads, and every process that carries the script's
    mark in its environment: a child that called setsid (a session and group of its own) too."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    mark = getattr(proc, "taskdsl_mark", None)
    if mark:
        for _ in range(3):  # a process forking while we look: look again
            if not kill_marked(mark):
                break


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment holds MARK=mark (Linux /proc); how many were found."""
    wanted = f"{MARK}={mark}".encode()
    found = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read(1 << 20)
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            try:
                os.kill(int(entry), signal.SIGKILL)
                found += 1
            except (ProcessLookupError, PermissionError):
                pass
    return found


async def _kill_once_started(spawning: asyncio.Future) -> None:
    """Let a start that was cancelled midway finish, then kill what it started. A start that
    fails is ignored (the caller is being cancelled: that is what it reports); a further cancel
    does not abandon the start, or a process that exists already would run on unseen."""
    while not spawning.done():
        try:
            await asyncio.wait({spawning})
        except asyncio.CancelledError:
            pass  # the caller re-raises its cancellation once the process is dealt with
    if spawning.cancelled() or spawning.exception() is not None:
        return  # nothing was started
    proc = spawning.result()
    kill_group(proc)
    await asyncio.shield(proc.wait())


#: bytes of stdout and of stderr kept from one script; the rest is read and dropped (noted)
OUTPUT_CAP = 10 * 1024 * 1024


async def _capture(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, int]:
    "(the first cap bytes of the stream, how many more were dropped), reading it to its end."
    kept, dropped = bytearray(), 0
    while chunk := await stream.read(1 << 16):
        room = max(cap - len(kept), 0)
        kept += chunk[:room]
        dropped += len(chunk) - min(room, len(chunk))
    return bytes(kept), dropped


async def _feed(stream: asyncio.StreamWriter, data: bytes) -> None:
    try:
        stream.write(data)
        await stream.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the script did not read its stdin: that is its business
    finally:
        stream.close()


async def _talk(proc: asyncio.subprocess.Process, stdin: bytes, cap: int):
    "communicate(), with each output capped: ((stdout, dropped), (stderr, dropped))."
    _, out, err = await asyncio.gather(_feed(proc.stdin, stdin), _capture(proc.stdout, cap),
                                       _capture(proc.stderr, cap))
    await proc.wait()
    return out, err


async def run_script(command: str, cwd: str, variables: dict[str, str], stdin: str | None,
                     timeout: float, fail_on_error: bool, on_start=None) -> TaskResult:
    """Run command with variables added to the environment (TASKDSL_INPUT_<NAME>, TASKDSL_SUB_<n>).
    Cancellation and timeout kill the process group. on_start(pid) lets callers record the group."""
    mark = os.urandom(12).hex()
    env = {**os.environ, **variables, MARK: mark}
    spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
        "/bin/sh", "-c", command, cwd=cwd, env=env, start_new_session=True,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
    try:
        proc = await asyncio.shield(spawning)
    except asyncio.CancelledError:
        # cancelled while the process was being started: it may exist already; never leave it running
        await _kill_once_started(spawning)
        kill_marked(mark)
        raise  # the cancellation wins, even when the start failed too
    except (OSError, ValueError) as error:  # a NUL byte in an input or the command, an argument list too long
        raise failure(f"script cannot start: {error}", "script_error", command=command) from None
    proc.taskdsl_mark = mark  # type: ignore[attr-defined]
    if on_start:
        on_start(proc.pid)
    try:
        (out, out_dropped), (err, err_dropped) = await asyncio.wait_for(
            _talk(proc, (stdin or "").encode("utf-8", "replace"), OUTPUT_CAP), timeout)
    except asyncio.TimeoutError:
        kill_group(proc)
        await proc.wait()
        raise failure(f"script timed out after {timeout:g} s and was killed", "timeout",
                      command=command, timeout=timeout) from None
    except BaseException:  # cancelled: leave nothing running
        kill_group(proc)
        await asyncio.shield(proc.wait())
        raise
    kill_group(proc)  # background children the script left behind
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    notes = {"stdout": stdout, "stderr": stderr, "exit_code": proc.returncode}
    if out_dropped or err_dropped:
        notes["output_capped"] = {"limit_bytes": OUTPUT_CAP, "stdout_dropped_bytes": out_dropped,
                                  "stderr_dropped_bytes": err_dropped}
    if proc.returncode != 0 and fail_on_error:
        last = stderr.strip().splitlines()[-1:] or [""]
        raise failure(f"script exited with code {proc.returncode}" + (f": {last[0]}" if last[0] else ""),
                      "script_error", **notes)
    return TaskResult(content=stdout.rstrip("\n"), notes=notes)
