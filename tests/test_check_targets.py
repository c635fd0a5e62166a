"""What `taskdsl check PATH…` takes by name: templates (and every file they reach, see
test_gate_compiler), a project's configuration files (checked as configuration, as `check .`
checks them), and nothing else (a one-line refusal, exit 2, never a bogus TD001)."""

import json

import pytest

from taskdsl.cli.main import main

TOML = '[run]\ntimout = 5\n'


def lines(capsys):
    out, err = capsys.readouterr()
    return out.splitlines(), err.splitlines()


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text(TOML)
    (tmp_path / "hello.task.xml").write_text("<task><description>Hi</description></task>\n")
    (tmp_path / ".taskdsl").mkdir()
    (tmp_path / ".taskdsl" / "memory.json").write_text('{"notes/a.md": 5}\n')
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# notes\n")
    (tmp_path / "data.json").write_text("{}\n")
    return tmp_path


def test_the_config_file_named_is_checked_as_configuration_with_the_lines_check_dot_gives(proj, capsys):
    assert main(["check", "."]) == 1
    whole, _ = lines(capsys)
    config_lines = [line for line in whole if line.startswith(("taskdsl.toml:", ".taskdsl"))]
    assert any(line.startswith("taskdsl.toml:2:1: ") and "TD901" in line and "did you mean 'timeout'?" in line
               for line in config_lines), config_lines
    assert main(["check", "taskdsl.toml"]) == 1
    out, err = lines(capsys)
    assert out == config_lines
    assert not any("TD001" in line for line in out)
    assert main(["check", ".taskdsl/memory.json"]) == 1  # the memory index is configuration too
    assert lines(capsys)[0] == config_lines


def test_a_clean_pyproject_counts_as_one_checked_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.taskdsl]\nmodel = "taskdsl/echo"\n')
    assert main(["check", "pyproject.toml"]) == 0
    out, err = lines(capsys)
    assert out == [] and err == ["0 errors, 0 warnings in 1 file"]


@pytest.mark.parametrize("name", ["notes/a.md", "data.json"])
def test_any_other_file_is_refused_in_one_line_naming_what_check_takes(proj, capsys, name):
    (proj / "taskdsl.toml").write_text("[run]\ntimeout = 5\n")
    (proj / ".taskdsl" / "memory.json").write_text('{"notes/a.md": "notes"}\n')
    assert main(["check", name]) == 2
    out, err = lines(capsys)
    assert out == []
    assert err == [f"taskdsl: error: {name}: not a template: taskdsl check takes templates (*.xml), folders of them, "
                   "and a project's taskdsl.toml, pyproject.toml or memory index"]


def test_a_refused_file_beside_a_template_still_checks_the_template(proj, capsys):
    (proj / "bad.task.xml").write_text("<task><description>{{zz}}</description></task>\n")
    assert main(["check", "--format", "json", "notes/a.md", "bad.task.xml"]) == 2
    out, err = capsys.readouterr()
    assert ("bad.task.xml", "TD402") in [(d["path"], d["code"]) for d in json.loads(out)]
    assert "notes/a.md: not a template" in err


def test_a_misspelt_config_key_gets_an_unsafe_rename_that_fix_unsafe_fixes_applies(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = '[run]\ntimout = 5\n\n[models."openai/x"]\n"max_concurency" = 2\n'
    (tmp_path / "taskdsl.toml").write_text(text)
    assert main(["check", "--format", "json", "taskdsl.toml"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["message"], d["fixes"]) for d in found] == [
        ("TD901", "unknown key 'timout' in [run]; did you mean 'timeout'?",
         [{"title": "Rename key 'timout' to 'timeout'", "safe": False,
           "edits": [{"line": 2, "column": 1, "endLine": 2, "endColumn": 7, "newText": "timeout"}]}]),
        ("TD901", "unknown key 'max_concurency' in [models.\"openai/x\"]; did you mean 'max_concurrency'?",
         [{"title": "Rename key 'max_concurency' to 'max_concurrency'", "safe": False,
           "edits": [{"line": 5, "column": 1, "endLine": 5, "endColumn": 17, "newText": '"max_concurrency"'}]}])]
    # --fix alone leaves an unsafe fix and says so
    assert main(["check", "--fix", "taskdsl.toml"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == "2 errors, 0 warnings in 1 file; 2 more fixes with --unsafe-fixes"
    assert (tmp_path / "taskdsl.toml").read_text() == text
    assert main(["check", "--fix", "--unsafe-fixes", "taskdsl.toml"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["taskdsl.toml:2:1: fixed TD901 Rename key 'timout' to 'timeout'",
                                "taskdsl.toml:5:1: fixed TD901 Rename key 'max_concurency' to 'max_concurrency'"]
    assert (tmp_path / "taskdsl.toml").read_text() == '[run]\ntimeout = 5\n\n[models."openai/x"]\n"max_concurrency" = 2\n'


def test_the_summary_says_which_files_were_reached_rather_than_named(tmp_path, monkeypatch, capsys):
    """`check b.task.xml` checks the library file b calls too (what its run checks): the count said "in 2 files"
    of one file named, with nothing to tell which the second was."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "lib.task.xml").write_text('<library><template name="shout" params="w"><task>'
                                           '<description>{{w}}</description></task></template></library>\n')
    (tmp_path / "b.task.xml").write_text('<task name="b"><description>x {{shout("hi")}}</description></task>\n')
    assert main(["check", "b.task.xml"]) == 0
    assert lines(capsys)[1] == ["0 errors, 0 warnings in 2 files (1 reached by the templates named)"]
    assert main(["check", "."]) == 0  # named, not reached
    assert lines(capsys)[1] == ["0 errors, 0 warnings in 2 files"]


def test_a_folder_that_is_a_project_of_its_own_is_passed_over_and_said(tmp_path, monkeypatch, capsys):
    """`check .` at a git root says nothing of sub/ (its own taskdsl.toml: another project, SPEC §17): a CI step
    would miss its templates silently."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "taskdsl.toml").write_text("")
    (tmp_path / "sub" / "m.task.xml").write_text("<task><description>x</description></task>\n")
    note = "taskdsl check: skipped sub/: a project of its own (its configuration file); check it with `taskdsl check sub`"
    assert main(["check", "."]) == 2
    assert lines(capsys)[1] == [note, "taskdsl: error: .: no templates (**/*.task.xml, **/*.test.xml) in this folder"]
    (tmp_path / "n.task.xml").write_text("<task><description>y</description></task>\n")
    assert main(["check", "."]) == 0
    assert lines(capsys)[1] == [note, "0 errors, 0 warnings in 1 file"]
    assert main(["check", "sub"]) == 0
    assert lines(capsys)[1] == ["0 errors, 0 warnings in 1 file"]
