"""Script tasks: quoting, environment, stdin, timeouts and cancellation leave no process behind."""

import asyncio
import os

import pytest

from evaluator_helpers import group_alive, run, write
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import run_file

HOSTILE = ["$(touch {marker}); rm -rf /nonexistent", "`touch {marker}`", "'; touch {marker}; '",
           '"; touch {marker}; "', "a\nb; touch {marker}", "$HOME && touch {marker}"]


@pytest.mark.parametrize("template", HOSTILE)
async def test_inputs_cannot_inject_shell_commands(tmp_path, template):
    marker = tmp_path / "pwned"
    hostile = template.format(marker=marker)
    result, _ = await run(tmp_path, """
        <task type="script" name="echoer">
          <command>printf '%s|%s' {{payload}} "$TASKDSL_INPUT_PAYLOAD"</command>
          <inputs><input name="payload">placeholder</input></inputs>
        </task>""", inputs={"payload": hostile})
    assert result.content == f"{hostile}|{hostile}"
    assert not marker.exists()


async def test_script_runs_in_the_template_folder_with_inputs_exported(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.txt").write_text("from a file")
    path = write(tmp_path, "sub/t.task.xml", """
        <task type="script" name="s">
          <command>cat data.txt; echo " $TASKDSL_INPUT_MY_NAME"</command>
          <inputs><input name="my_name">Ada</input></inputs>
        </task>""")
    result = await run_file(path)
    assert result.content == "from a file Ada"
    assert result.notes == {"stdout": "from a file Ada\n", "stderr": "", "exit_code": 0, "dataUsage": {
        "inputs": ["my_name"], "files": [], "inherited_context": 0, "accumulated_context": 0,
        "model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0}}


async def test_content_drops_only_trailing_newlines(tmp_path):
    result, _ = await run(tmp_path, """<task type="script" name="s"><command>printf '  a\\n\\nb  \\n\\n\\n'</command></task>""")
    assert result.content == "  a\n\nb  "


async def test_json_output_of_a_script_is_parsed(tmp_path):
    result, _ = await run(tmp_path, """
        <task type="script" name="s"><command>printf '```json\\n{"n": [1, 2]}\\n```'</command>
          <output_format type="json" schema="object"/></task>""")
    assert result.parsed_content == {"n": [1, 2]}


async def test_timeout_kills_the_whole_process_group(tmp_path):
    pids = []
    path = write(tmp_path, "slow.task.xml", """
        <task type="script" name="slow">
          <command timeout="1">sleep 30 &amp; sleep 30; echo never</command>
        </task>""")
    with pytest.raises(TaskError) as info:
        await run_file(path, on_script_start=pids.append)
    assert (info.value.type, info.value.reason) == ("TASK_FAILURE", "timeout")
    assert info.value.message == "task 'slow': script timed out after 1 s and was killed"
    assert len(pids) == 1 and not group_alive(pids[0])


async def test_cancelling_a_run_kills_running_scripts(tmp_path):
    pids = []
    started = asyncio.Event()
    path = write(tmp_path, "long.task.xml", """
        <task type="sequential" name="long">
          <description>long</description>
          <steps>
            <task type="script">
              <command>sleep 30 &amp; sleep 30</command>
              <inputs><input name="x"><task type="script"><command>sleep 30</command></task></input></inputs>
            </task>
          </steps>
        </task>""")

    def on_start(pid):
        pids.append(pid)
        started.set()

    cancel = asyncio.Event()
    runner = asyncio.create_task(run_file(path, on_script_start=on_start, cancel=cancel))
    await asyncio.wait_for(started.wait(), 10)
    cancel.set()
    with pytest.raises(TaskError) as info:
        await runner
    assert (info.value.reason, info.value.message) == ("cancelled", "the run was cancelled")
    assert pids and not any(group_alive(p) for p in pids)


async def test_asyncio_cancel_of_the_run_task_kills_scripts(tmp_path):
    pids = []
    started = asyncio.Event()
    path = write(tmp_path, "long.task.xml", """<task type="script" name="s"><command>sleep 30</command></task>""")
    runner = asyncio.create_task(run_file(path, on_script_start=lambda pid: (pids.append(pid), started.set())))
    await asyncio.wait_for(started.wait(), 10)
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert pids and not group_alive(pids[0])


async def test_background_children_do_not_outlive_a_finished_script(tmp_path):
    pids = []
    path = write(tmp_path, "bg.task.xml", """
        <task type="script" name="bg"><command>(sleep 30 &gt;/dev/null 2&gt;&amp;1 &amp;); echo done</command></task>""")
    result = await run_file(path, on_script_start=pids.append)
    assert result.content == "done"
    assert not group_alive(pids[0])


async def test_missing_input_placeholder_is_a_clear_error(tmp_path):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task type="script" name="needs"><command>echo "$TASKDSL_INPUT_X"</command>
            <inputs><input name="x"/></inputs></task>""", check=False)
    assert info.value.message == "task 'needs': input 'x' has no value: pass it from the caller or with --input x=…"
    assert os.environ.get("TASKDSL_INPUT_X") is None


def test_interrupting_taskdsl_run_kills_the_script_and_exits_130(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "pid"
    path = write(tmp_path, "long.task.xml", f"""
        <task type="script" name="long"><command>echo $$ > {pidfile}; sleep 30</command></task>""")
    proc = subprocess.Popen([sys.executable, "-m", "taskdsl.cli.run", "run", path, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    script_pid = int(pidfile.read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert err.strip() == "taskdsl run: cancelled"
    assert not group_alive(script_pid)


async def test_a_cancel_while_the_script_is_being_started_leaves_no_process(tmp_path, monkeypatch):
    import asyncio

    from taskdsl.evaluator.script import run_script

    real, started = asyncio.create_subprocess_exec, []

    async def recording(*args, **kwargs):  # every process the script module starts, known at once
        proc = await real(*args, **kwargs)
        started.append(proc.pid)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recording)
    for attempt in range(8):  # the cancel lands at different points of process creation
        before = len(started)
        task = asyncio.ensure_future(run_script("sleep 30; true", str(tmp_path), {}, None, 60, True))
        for _ in range(attempt):
            await asyncio.sleep(0)
        task.cancel()
        # a cancel that lands mid-start must not wait for the script (it did: 30 s, holding the pipes);
        # the timeout only turns such a hang into a failure
        done, _ = await asyncio.wait({task}, timeout=20)
        assert done, f"attempt {attempt}: the cancelled run waited for its script"
        for pid in started[before:]:  # a shell that was started (it leads its group) is gone
            assert not group_alive(pid), f"attempt {attempt}: the script outlived the cancel"
    assert started, "no attempt reached the start of a process: the cancels never landed mid-start"


async def test_a_script_that_cannot_start_is_a_task_failure_not_a_crash(tmp_path):
    with pytest.raises(TaskError) as caught:
        await run(tmp_path, """
            <task type="script" name="s">
              <command>echo "$TASKDSL_INPUT_X"</command>
              <inputs><input name="x">placeholder</input></inputs>
            </task>""", inputs={"x": "a\x00b"})
    assert caught.value.type == "TASK_FAILURE" and "cannot start" in caught.value.message


def _slow_spawn(monkeypatch, entered, release, fail=None):
    """Replace the OS spawn the script module calls with a slow one: it signals `entered` and
    waits for `release`, then raises `fail` (a start that is slow and then fails); without
    `fail`, the process exists before `entered` (a start whose last steps are slow).
    Returns the list of the pids it started."""
    real = asyncio.create_subprocess_exec
    pids = []

    async def spawn(*args, **kwargs):
        proc = None if fail is not None else await real(*args, **kwargs)
        if proc is not None:
            pids.append(proc.pid)
        entered.set()
        await release.wait()
        if fail is not None:
            raise fail
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawn)
    return pids


async def _cancel_while_a_failing_start_is_pending(monkeypatch, coroutine) -> None:
    """Cancel `coroutine`'s task while its script is being started, then let the start fail: the
    start error must not replace the cancellation (it did: a "script cannot start" TaskError)."""
    entered, release = asyncio.Event(), asyncio.Event()
    _slow_spawn(monkeypatch, entered, release, fail=OSError(7, "Argument list too long"))
    task = asyncio.ensure_future(coroutine())
    await asyncio.wait_for(entered.wait(), 10)
    task.cancel()
    await asyncio.sleep(0)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


async def test_a_cancel_during_a_start_that_also_fails_is_still_a_cancel(tmp_path, monkeypatch):
    from taskdsl.evaluator.script import run_script

    await _cancel_while_a_failing_start_is_pending(
        monkeypatch, lambda: run_script("true", str(tmp_path), {}, None, 60, True))


async def test_cancelling_a_run_whose_script_start_fails_reports_a_cancel(tmp_path, monkeypatch):
    path = write(tmp_path, "s.task.xml", """<task type="script" name="s"><command>true</command></task>""")
    await _cancel_while_a_failing_start_is_pending(monkeypatch, lambda: run_file(path))


async def test_a_second_cancel_during_a_slow_start_still_kills_the_process(tmp_path, monkeypatch):
    from taskdsl.evaluator.script import run_script

    entered, release = asyncio.Event(), asyncio.Event()
    pids = _slow_spawn(monkeypatch, entered, release)
    task = asyncio.ensure_future(run_script("sleep 30 & sleep 30", str(tmp_path), {}, None, 60, True))
    await asyncio.wait_for(entered.wait(), 10)  # the process exists; its start has not returned yet
    task.cancel()
    await asyncio.sleep(0)
    task.cancel()  # an impatient caller cancels again while the start is still pending
    await asyncio.sleep(0)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    # the second cancel abandoned the pending start, and the started process ran on (it did)
    assert len(pids) == 1 and not group_alive(pids[0])
