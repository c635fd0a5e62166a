"""Settings that widen what a run may read are shown by the plan, and in the editor a plan with them
asks first: a repository's own `[run] allow_read = ["/"]` no longer removes confinement unseen."""

import json

import pytest

from taskdsl.cli.main import main
from taskdsl.cli.run import run_defaults
from taskdsl.evaluator import consent
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import prepare_file


def write(tmp_path, allow):
    (tmp_path / "taskdsl.toml").write_text(f"[run]\nallow_read = {allow}\n", encoding="utf-8")
    path = tmp_path / "r.task.xml"
    path.write_text('<task name="r"><description>Read</description><file_paths><path>/etc/hostname</path>'
                    '</file_paths></task>\n', encoding="utf-8")
    return str(path)


def test_the_plan_shows_the_projects_allow_read_and_the_editor_asks(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, '["/"]')
    assert main(["run", path, "--plan", "--model", "taskdsl/echo"]) == 0
    out = capsys.readouterr().out
    assert "  may read outside the project, in:\n    /\n" in out
    assert "  with the configuration of: taskdsl.toml\n" in out
    _, project, _ = run_defaults(path, [])
    view = consent.plan_view(prepare_file(path, None, {}, settings=project), "taskdsl/echo", None)
    assert "widened" in consent.reasons(view, allow_scripts=True)


def test_allow_read_from_the_project_lets_a_run_read_there_once_the_user_agrees(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, '["/etc"]')
    assert main(["run", path, "--model", "taskdsl/echo"]) == 2  # nobody agreed: nothing runs
    err = capsys.readouterr().err
    assert ("not run: the project's taskdsl.toml widens what this run may do ([run] allow_read /etc); read the plan "
            "(taskdsl run --plan), then agree with --yes (or --agree DIGEST, that plan only), or give a folder to read "
            "yourself with --allow-read") in err
    assert main(["run", path, "--model", "taskdsl/echo", "--yes"]) == 0
    assert main(["run", path, "--model", "taskdsl/echo", "--allow-read", "/etc"]) == 0  # the user's own flag
    path = write(tmp_path, "[]")
    assert main(["run", path, "--model", "taskdsl/echo", "--yes"]) != 0
    assert "is outside the project" in capsys.readouterr().err


def test_a_project_allow_read_is_not_applied_by_taskdsl_test_without_yes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, '["/etc"]')
    (tmp_path / "r.test.xml").write_text(
        '<tests><test name="reads" task="r"><expect test="true"/></test></tests>\n', encoding="utf-8")
    assert main(["test", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "not run: the project's taskdsl.toml widens what this run may do ([run] allow_read /etc)" in out
    assert main(["test", str(tmp_path), "--yes"]) == 0


def library_outside(tmp_path):
    """A project whose taskdsl.toml names a library folder outside it, holding the script a ref runs."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "lib.task.xml").write_text(
        '<library><task name="helper" type="script"><command>touch ran</command></task></library>\n', encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "taskdsl.toml").write_text('library_paths = ["../shared"]\n', encoding="utf-8")
    (project / "t.task.xml").write_text('<task ref="helper"/>\n', encoding="utf-8")
    return project, str(project / "t.task.xml")


def test_library_paths_outside_the_project_are_shown_and_need_the_users_yes(tmp_path, capsys, monkeypatch):
    project, path = library_outside(tmp_path)
    monkeypatch.chdir(project)
    assert main(["run", path, "--plan"]) == 0
    out = capsys.readouterr().out
    assert ("  with what the project's configuration widens (it applies only if you agree):\n"
            f"    library_paths = {tmp_path / 'shared'} (templates from there are compiled for this run)\n") in out
    assert main(["run", path]) == 2
    assert "widens what this run may do (library_paths " in capsys.readouterr().err
    assert not (tmp_path / "shared" / "ran").exists()  # the template from outside never ran (in its folder)
    assert main(["run", path, "--yes"]) == 0
    assert (tmp_path / "shared" / "ran").exists()


def test_a_template_linked_from_inside_the_project_to_a_file_outside_needs_the_users_yes(tmp_path, capsys,
                                                                                         monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.task.xml").write_text(
        '<library><task name="evil" type="script"><command>touch ran</command></task></library>\n', encoding="utf-8")
    project = tmp_path / "project"
    (project / "lib").mkdir(parents=True)
    (project / "taskdsl.toml").write_text('library_paths = ["lib"]\n', encoding="utf-8")  # inside the project
    (project / "lib" / "evil.task.xml").symlink_to(outside / "lib.task.xml")
    (project / "t.task.xml").write_text('<task ref="evil"/>\n', encoding="utf-8")
    path = str(project / "t.task.xml")
    monkeypatch.chdir(project)
    assert main(["run", path, "--plan"]) == 0
    assert (f"    a linked template = {outside / 'lib.task.xml'} (a link inside the project to this file outside it)\n"
            in capsys.readouterr().out)
    assert main(["run", path]) == 2
    assert "widens what this run may do (a linked template " in capsys.readouterr().err
    assert not (project / "lib" / "ran").exists()  # the template from outside never ran (in the folder of its link)
    assert main(["run", path, "--yes"]) == 0
    assert (project / "lib" / "ran").exists()


def test_taskdsl_test_of_a_task_linked_to_a_file_outside_the_project_needs_the_users_yes(tmp_path, capsys,
                                                                                         monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.task.xml").write_text('<task type="script" name="t"><command>touch ran; echo ok</command></task>\n',
                                        encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    (project / "t.task.xml").symlink_to(outside / "t.task.xml")
    (project / "t.test.xml").write_text('<tests><test name="a" task="t"><expect test=\'"ok" in output\'/></test></tests>\n',
                                        encoding="utf-8")
    monkeypatch.chdir(project)
    assert main(["test", "t.test.xml"]) == 1
    assert "a linked template" in capsys.readouterr().out
    assert not (outside / "ran").exists() and not (project / "ran").exists()
    assert main(["test", "t.test.xml", "--yes"]) == 0


def test_the_plan_digest_covers_what_the_project_widens(tmp_path, monkeypatch):
    import dataclasses

    project, path = library_outside(tmp_path)
    monkeypatch.chdir(project)
    _, settings, _ = run_defaults(path, [])
    prepared = prepare_file(path, None, {}, settings=settings)
    view = consent.plan_view(prepared, "taskdsl/echo", None)
    assert consent.reasons(view, allow_scripts=True) == ["widened"]
    narrowed = dataclasses.replace(prepared, widened=())
    assert consent.plan_view(narrowed, "taskdsl/echo", None).digest != view.digest


def test_a_config_file_another_user_left_in_a_parent_folder_is_not_adopted(tmp_path, capsys, monkeypatch):
    import os

    from taskdsl.project.workspace import project_root

    shared = tmp_path / "shared"
    (shared / "elsewhere").mkdir(parents=True)
    (shared / "elsewhere" / "lib.task.xml").write_text(
        '<library><task name="helper" type="script"><command>touch ran</command></task></library>\n', encoding="utf-8")
    (shared / "taskdsl.toml").write_text('library_paths = ["elsewhere"]\n', encoding="utf-8")
    mine = shared / "mine"
    mine.mkdir()
    (mine / "t.task.xml").write_text('<task ref="helper"/>\n', encoding="utf-8")
    assert project_root(mine / "t.task.xml") == str(shared)  # the user's own: adopted
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)  # now the files are another user's
    assert project_root(mine / "t.task.xml") == str(mine)
    assert main(["check", str(mine / "t.task.xml")]) == 1
    assert "helper" in capsys.readouterr().out  # the ref no longer resolves through its library_paths


class Terminal:
    "A terminal's stream: what was written to it, the line the user types."

    def __init__(self, typed: str = ""):
        self.typed, self.written = typed, ""

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self.typed

    def write(self, text: str) -> None:
        self.written += text

    def flush(self) -> None:
        pass


def test_on_a_terminal_taskdsl_run_shows_what_the_project_widens_and_takes_the_users_answer(tmp_path, monkeypatch):
    import argparse

    from taskdsl.cli.run import agree

    project, path = library_outside(tmp_path)
    monkeypatch.chdir(project)
    _, settings, _ = run_defaults(path, [])
    for typed, agreed in (("y\n", True), ("\n", False), ("no\n", False)):
        prepared = prepare_file(path, None, {}, settings=settings)
        screen = Terminal()
        agree(prepared, argparse.Namespace(yes=False), "taskdsl/echo", None, stdin=Terminal(typed), stderr=screen)
        assert prepared.agreed is agreed
        assert f"    library_paths = {tmp_path / 'shared'} (templates from there" in screen.written
        assert screen.written.endswith("Asked because the project's configuration widens what it may read, write "
                                       "or run (allow_read, trace_dir, library_paths).\nPlan " + consent.plan_view(
                                           prepared, "taskdsl/echo", None).digest[:consent.PLAN_DIGITS] + "\nRun it? [y/N] ")
        if not agreed:  # the refusal says the answer was no, not to go and read the plan just shown
            from taskdsl.evaluator.runner import refuse_unagreed

            with pytest.raises(TaskError) as refused:
                refuse_unagreed(prepared)
            assert str(refused.value).startswith("VALIDATION_ERROR (not_agreed): not run: you did not agree to its "
                                                 "plan, which the project's taskdsl.toml widens (library_paths ")


def test_a_batch_in_a_widening_project_runs_no_row_without_yes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, '["/etc"]')
    (tmp_path / "rows.jsonl").write_text('{}\n{}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["run", path, "--data", "rows.jsonl", "--out", str(out), "--model", "taskdsl/echo", "-q"]) == 2
    assert capsys.readouterr().err == (
        "taskdsl run: not run: the project's taskdsl.toml widens what this run may do ([run] allow_read /etc); read the "
        "plan (taskdsl run --plan), then agree with --yes (or --agree DIGEST, that plan only), or give a folder to "
        "read yourself with --allow-read\n")
    assert not out.exists()  # no row ran
    assert main(["run", path, "--data", "rows.jsonl", "--out", str(out), "--model", "taskdsl/echo", "-q", "--yes"]) == 0
    assert [json.loads(line)["status"] for line in out.read_text(encoding="utf-8").splitlines()] == ["COMPLETE"] * 2


def test_render_reads_where_the_project_allows_only_once_the_user_allows_it_too(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "notes.txt").write_text("outside notes\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "taskdsl.toml").write_text('[run]\nallow_read = ["../outside"]\n', encoding="utf-8")
    path = project / "r.task.xml"
    path.write_text('<task name="r"><description>Read</description><file_paths><path>../outside/notes.txt</path>'
                    '</file_paths></task>\n', encoding="utf-8")
    assert main(["render", str(path)]) == 2  # a preview is no consent: the project's folder is not read
    captured = capsys.readouterr()
    assert "outside notes" not in captured.out and "widens what this run may do" in captured.err
    assert main(["render", str(path), "--allow-read", str(tmp_path / "outside")]) == 0
    assert "outside notes" in capsys.readouterr().out


def test_compiling_a_run_walks_what_it_reaches_once_and_reads_the_projects_config_once(tmp_path, monkeypatch):
    from taskdsl.evaluator import plan
    from taskdsl.project import config

    path = write(tmp_path, '["/etc"]')
    walks, reads = [], []
    reach, load = plan.reach, config.load_config
    monkeypatch.setattr(plan, "reach", lambda *a, **k: walks.append(a) or reach(*a, **k))
    monkeypatch.setattr(config, "load_config", lambda *a, **k: reads.append(a) or load(*a, **k))
    compiled = plan.compile_entry(None, path)
    assert (len(walks), len(reads)) == (1, 1)
    assert compiled.widened == (("[run] allow_read", "/etc"),)
