"""`taskdsl run`: output on stdout, progress on stderr, exit codes 0/1/2."""

import json

import pytest

from evaluator_helpers import write
from taskdsl.cli.run import main

SEQ = """
    <task type="sequential" name="pipe">
      <description>pipe</description>
      <inputs><input name="word">hello</input><input name="times">1</input></inputs>
      <steps>
        <task type="script"><command>echo {{word}} {{times}}</command></task>
        <task type="script"><command>tr a-z A-Z</command></task>
      </steps>
    </task>"""


def test_run_prints_the_output_and_progress(tmp_path, capsys):
    path = write(tmp_path, "pipe.task.xml", SEQ)
    assert main(["run", path]) == 0
    out, err = capsys.readouterr()
    assert out == "HELLO 1\n"
    assert err.splitlines() == [line for line in err.splitlines() if line.strip()]
    assert "  ✓ pipe/steps[1] (script" in err and "✓ pipe (sequential" in err


def test_inputs_file_and_input_flags(tmp_path, capsys):
    path = write(tmp_path, "pipe.task.xml", SEQ)
    inputs = tmp_path / "in.json"
    inputs.write_text(json.dumps({"word": "from-file", "times": "2"}))
    assert main(["run", path, "--inputs", str(inputs), "--input", "times=3", "-q"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("FROM-FILE 3\n", "")


def test_json_output(tmp_path, capsys):
    path = write(tmp_path, "pipe.task.xml", SEQ)
    assert main(["run", path, "--json", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["content"] == "HELLO 1" and data["status"] == "COMPLETE" and data["notes"]["steps"] == 2


def test_task_failure_exits_1_with_the_error(tmp_path, capsys):
    path = write(tmp_path, "fail.task.xml", """
        <task type="sequential" name="f"><description>f</description>
          <steps><task type="script"><command>echo ok</command></task>
                 <task type="script"><command>echo nope >&amp;2; exit 7</command></task></steps></task>""")
    assert main(["run", path, "-q"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "taskdsl run: TASK_FAILURE (subtask_failure): task 'f': step 2 of 2 failed" in err
    assert "script exited with code 7: nope" in err
    assert "partial results of 1 earlier step(s)" in err


def test_json_error_carries_partial_results(tmp_path, capsys):
    path = write(tmp_path, "fail.task.xml", """
        <task type="sequential" name="f"><description>f</description>
          <steps><task type="script"><command>echo ok</command></task>
                 <task type="script"><command>exit 7</command></task></steps></task>""")
    assert main(["run", path, "-q", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["reason"] == "subtask_failure"
    assert [p["content"] for p in error["details"]["partial_results"]] == ["ok"]


def test_template_that_does_not_check_exits_2_and_says_which(tmp_path, capsys):
    marker = tmp_path / "ran"
    path = write(tmp_path, "bad.task.xml", f"""
        <task type="script" name="b"><command>touch {marker}</command></task>
        <task type="script"><command>touch {marker}</command></task>""")
    assert main(["run", path]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2:2: error TD001" in err
    assert "does not check (1 error(s)); fix them first" in err
    assert not marker.exists()


def test_bad_input_flag_and_missing_file_exit_2(tmp_path, capsys):
    path = write(tmp_path, "pipe.task.xml", SEQ)
    assert main(["run", path, "--input", "novalue"]) == 2
    assert "--input 'novalue': expected NAME=VALUE" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.task.xml")]) == 2
    assert "missing.task.xml: no such file" in capsys.readouterr().err


def test_model_flag_overrides_the_task_model(tmp_path, capsys):
    path = write(tmp_path, "m.task.xml", """
        <task name="m"><model>gpt-4o-mini</model><instructions>say hi</instructions></task>""")
    assert main(["run", path, "--model", "taskdsl/echo", "-q"]) == 0
    assert capsys.readouterr().out == "say hi\n"


def test_a_file_with_a_utf8_bom_runs_like_one_without(tmp_path, capsys):
    (tmp_path / "helper.task.xml").write_bytes(
        b'\xef\xbb\xbf<task name="helper"><instructions>from helper</instructions></task>\n')
    main_path = tmp_path / "main.task.xml"
    main_path.write_bytes(b'\xef\xbb\xbf<task type="sequential" name="main"><steps>'
                          b'<task ref="helper"/></steps></task>\n')
    assert main(["run", str(main_path), "--model", "taskdsl/echo", "-q"]) == 0
    assert capsys.readouterr().out.strip().endswith("from helper")


def test_a_file_that_is_not_utf8_or_is_a_folder_exits_2_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.task.xml"
    bad.write_bytes(b"<task><instructions>caf\xe9</instructions></task>\n")
    assert main(["run", str(bad), "--model", "taskdsl/echo", "-q"]) == 2
    err = capsys.readouterr().err
    assert "bad.task.xml" in err and "UTF-8" in err and "Traceback" not in err
    assert main(["run", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "Traceback" not in err


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["no-bom", "bom"])
def test_the_bad_byte_of_a_file_that_is_not_utf8_is_its_offset_in_the_file(tmp_path, capsys, bom):
    bad = tmp_path / "bad.task.xml"
    data = bom + b"<task><instructions>caf\xe9</instructions></task>\n"
    bad.write_bytes(data)
    assert main(["run", str(bad), "--model", "taskdsl/echo", "-q"]) == 2
    offset = data.index(b"\xe9")  # with a BOM it was reported 3 bytes early (the offset past the BOM)
    assert capsys.readouterr().err == f"taskdsl run: {bad}: not valid UTF-8 at byte {offset} (0xe9): templates are UTF-8\n"
