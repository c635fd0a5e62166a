"""Settings that widen what a run may read are shown by the plan, and in the editor a plan with them
asks first: a repository's own `[run] allow_read = ["/"]` no longer removes confinement unseen."""

from taskdsl.cli.main import main
from taskdsl.cli.run import run_defaults
from taskdsl.evaluator import consent
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


def test_allow_read_from_the_project_lets_a_run_read_there(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, '["/etc"]')
    assert main(["run", path, "--model", "taskdsl/echo"]) == 0
    path = write(tmp_path, "[]")
    assert main(["run", path, "--model", "taskdsl/echo"]) != 0
    assert "is outside the project" in capsys.readouterr().err


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
