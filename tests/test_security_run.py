"""What a run reads (confined to the project), what it shows (secrets masked by value), what it
writes (owner-only files) and what the memory system sends (metadata only)."""

import json
import os
import stat

import pytest

from evaluator_helpers import write
from taskdsl.rules.checker import check_text
from taskdsl.cli.run import main

READER = """<task name="reader">
  <description>summarise</description>
  <file_paths>{paths}</file_paths>
</task>"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "project" / ".git").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("PRIVATE-NOTES")
    (tmp_path / "project" / "inside.txt").write_text("shared notes")
    return tmp_path / "project"


def run(argv, capsys):
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def diagnostics(path):
    with open(path, encoding="utf-8") as f:
        return [(d.code, d.severity.value, d.message) for d in check_text(f.read(), path=str(path)).diagnostics
                if d.code.startswith("TD8")]


@pytest.mark.parametrize("written", ["../outside.txt", "{outside}", "link.txt"])
def test_a_file_outside_the_project_is_a_warning_and_a_refusal(project, capsys, written):
    outside = project.parent / "outside.txt"
    (project / "link.txt").symlink_to(outside)
    path = write(project, "t.task.xml", READER.format(paths=f"<path>{written.format(outside=outside)}</path>"))
    [(code, severity, message)] = diagnostics(path)
    assert (code, severity) == ("TD802", "warning")
    assert f"is outside the project ({project}): allow it with --allow-read {project.parent} (taskdsl run)" in message
    trace = project / "trace.jsonl"
    code, out, err = run([path, "--model", "taskdsl/echo", "--trace", str(trace)], capsys)
    assert code == 1 and out == ""
    assert "file_paths:" in err and f"--allow-read {project.parent}" in err
    assert "PRIVATE-NOTES" not in trace.read_text()


def test_allow_read_lets_the_run_read_the_folder(project, capsys):
    path = write(project, "t.task.xml", READER.format(paths="<path>../outside.txt</path>"))
    trace = project / "trace.jsonl"
    code, _, err = run([path, "--model", "taskdsl/echo", "--trace", str(trace), "--allow-read", str(project.parent)],
                       capsys)
    assert code == 0, err
    assert "PRIVATE-NOTES" in trace.read_text()


@pytest.mark.parametrize("written", ["/proc/self/environ", "/dev/zero", "/sys/kernel/hostname"])
def test_proc_sys_and_dev_are_never_read_even_when_allowed(project, capsys, written):
    path = write(project, "t.task.xml", READER.format(paths=f"<path>{written}</path>"))
    [(code, _, message)] = diagnostics(path)
    assert code == "TD802" and f"'{written}' is under /{written.split('/')[1]}, which a run never reads" in message
    code, _, err = run([path, "--model", "taskdsl/echo", "--allow-read", "/"], capsys)
    assert code == 1 and "which a run never reads" in err


def test_paths_a_command_prints_are_confined_too(project, capsys):
    path = write(project, "t.task.xml", """
        <task name="reader"><description>summarise</description>
          <file_paths source="command"><command>echo inside.txt; echo /etc/passwd</command></file_paths>
        </task>""")
    code, _, err = run([path, "--model", "taskdsl/echo"], capsys)
    assert code == 1 and "'/etc/passwd' is outside the project" in err


def test_files_inside_the_project_are_read_without_a_word(project, capsys):
    path = write(project, "sub/t.task.xml", READER.format(paths="<path>../inside.txt</path>"))
    assert diagnostics(path) == []
    trace = project / "trace.jsonl"
    code, _, err = run([path, "--model", "taskdsl/echo", "--trace", str(trace)], capsys)
    assert code == 0, err
    assert "shared notes" in trace.read_text()


# ---------------------------------------------------------------- secrets

SECRET = "sk-live-0123456789abcdef"
LEAKY = """<task type="script" name="leaky"><command>echo "key: $MY_API_KEY"; echo "{{{{x}}}} $MY_API_KEY" &gt;&amp;2; exit {code}</command>
  <inputs><input name="x">v</input></inputs></task>"""


def test_a_secret_a_step_prints_is_masked_in_output_json_and_trace(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", SECRET)
    monkeypatch.setenv("SHORT_TOKEN", "abc1234")  # under 8 characters: not a secret
    path = write(tmp_path, "t.task.xml", LEAKY.format(code=0))
    trace = tmp_path / "trace.jsonl"
    code, out, _ = run([path, "--trace", str(trace), "--input", "x=abc1234"], capsys)
    assert (code, out) == (0, "key: ***\n")
    code, out, _ = run([path, "--json", "--input", "x=abc1234"], capsys)
    notes = json.loads(out)["notes"]
    assert notes.pop("dataUsage")["inputs"] == ["x"]
    assert notes == {"stdout": "key: ***\n", "stderr": "abc1234 ***\n", "exit_code": 0}
    text = trace.read_text()
    assert SECRET not in text and "key: ***" in text and "abc1234" in text
    assert stat.S_IMODE(os.stat(trace).st_mode) == 0o600


def test_a_secret_in_a_failure_is_masked_in_progress_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", SECRET)
    path = write(tmp_path, "t.task.xml", LEAKY.format(code=3))
    code, out, err = run([path, "--json"], capsys)
    assert code == 1 and SECRET not in out + err
    assert "script exited with code 3: v ***" in err  # the progress line and the final message
    assert json.loads(out)["error"]["details"]["stderr"] == "v ***\n"


def test_an_existing_trace_file_becomes_owner_only(tmp_path, capsys):
    trace = tmp_path / "trace.jsonl"
    trace.write_text("old")
    os.chmod(trace, 0o644)
    path = write(tmp_path, "t.task.xml", LEAKY.format(code=0))
    run([path, "--trace", str(trace)], capsys)
    assert stat.S_IMODE(os.stat(trace).st_mode) == 0o600


# ---------------------------------------------------------------- memory

def test_memory_never_reads_an_index_entry_that_leads_out_of_the_project(tmp_path, capsys, monkeypatch):
    """A hand-edited index naming a link out of the project (or a path outside it): the index does
    not check (TD908 at each entry), so no run starts and its contents never reach a prompt,
    the trace or the output."""
    monkeypatch.setenv("MY_API_KEY", SECRET)
    root = tmp_path / "project"
    root.mkdir()
    (root / "taskdsl.toml").write_text("")
    (tmp_path / "private.txt").write_text("PRIVATE quarterly numbers")
    os.symlink(tmp_path / "private.txt", root / "notes.txt")
    (root / ".taskdsl").mkdir()
    (root / ".taskdsl" / "memory.json").write_text(json.dumps({"notes.txt": "quarterly notes",
                                                               "../private.txt": "quarterly numbers"}))
    path = write(root, "t.task.xml", """
        <task name="t"><description>read the quarterly notes</description>
          <context_management><inherit_context>none</inherit_context><fresh_context>enabled</fresh_context></context_management>
        </task>""")
    trace = tmp_path / "trace.jsonl"
    code, out, err = run([path, "--model", "taskdsl/echo", "--trace", str(trace), "--json"], capsys)
    assert code == 2
    index = root / ".taskdsl" / "memory.json"
    assert [line.split(" error ")[0] for line in err.splitlines() if " error TD908 " in line] == [
        f"{index}:1:2:", f"{index}:1:34:"]
    assert json.loads(out)["error"]["reason"] == "template_errors"
    assert "PRIVATE" not in out and "PRIVATE" not in err and not trace.exists()


def test_the_editor_setting_allows_a_folder_for_the_checker_too(project):
    from taskdsl.project.settings import Settings

    path = write(project, "t.task.xml", READER.format(paths="<path>../outside.txt</path>"))
    text = open(path, encoding="utf-8").read()
    settings = Settings().updated({"run": {"allowRead": [str(project.parent)]}})
    assert [d.code for d in check_text(text, path=path).diagnostics] == ["TD802"]
    assert [d.code for d in check_text(text, path=path, settings=settings).diagnostics] == []


def test_server_logs_are_masked_before_any_handler_writes_them():
    import io
    import logging

    from taskdsl.support.redaction import MaskingFilter, Redactor

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(MaskingFilter(Redactor([SECRET])))
    logger = logging.getLogger("taskdsl.test-masking")
    logger.addHandler(handler)
    try:
        logger.warning("calling with key %s", SECRET)
        try:
            raise RuntimeError(f"auth failed for {SECRET}")
        except RuntimeError:
            logger.exception("model call failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text
    assert "calling with key ***" in text and "RuntimeError: auth failed for ***" in text
