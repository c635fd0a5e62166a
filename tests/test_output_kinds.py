"""TD703 knows what a `<call>` or `<task ref>` step produces (its template's or task's declared
output, or a template's `returns`), and reports `{{last_output.field}}` after a step whose output is
plain text (the run fails there with "'last_output' is text, not JSON")."""

import pytest

from taskdsl.cli.main import main

LIB = """<library>
  <template name="classify" params="ticket" returns="json">
    <task>
      <instructions>Classify {{ticket}} as JSON</instructions>
      <output_format type="json" schema="object"/>
    </task>
  </template>
  <template name="count" params="text" returns="object">
    <task type="script"><command>printf '{"n": 1}'</command></task>
  </template>
  <template name="slug" params="text">
    <task type="script"><command>printf '%s' {{text}}</command></task>
  </template>
  <task name="reply">
    <instructions>Write a polite reply to: {{ticket}}</instructions>
    <inputs><input name="ticket"/></inputs>
  </task>
</library>
"""

COND = '    <cond><case test="output.x == 1"><task type="script"><command>echo yes</command></task></case></cond>\n'


def sequential(first: str, second: str = COND) -> str:
    return f'<task type="sequential" name="main">\n  <steps>\n    {first}\n{second}  </steps>\n</task>\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "lib.task.xml").write_text(LIB)
    return tmp_path


def checked(capsys, path="main.task.xml") -> list[str]:
    main(["check", path])
    return [line for line in capsys.readouterr().out.splitlines() if "TD703" in line]


def test_a_cond_after_a_call_of_a_template_whose_task_prints_text(project, capsys):
    (project / "main.task.xml").write_text(sequential('<call template="slug"><arg>hi</arg></call>'))
    assert checked(capsys) == [
        "main.task.xml:4:6: warning TD703 this cond tests the output of the <call> of template 'slug' before it as "
        "JSON, which that template's task does not declare (<output_format type=\"json\"/>): the run fails only if "
        "the output does not parse as JSON; add the declaration to that task"]


def test_a_cond_after_a_ref_of_a_task_that_declares_no_output(project, capsys):
    (project / "main.task.xml").write_text(sequential(
        '<task ref="reply"><inputs><input name="ticket">t</input></inputs></task>'))
    assert checked(capsys) == [
        "main.task.xml:4:6: warning TD703 this cond tests the output of the <task ref=\"reply\"> before it as JSON, "
        "which task 'reply' does not declare (<output_format type=\"json\"/>): the run fails only if the output "
        "does not parse as JSON; add the declaration to that task"]


@pytest.mark.parametrize("first", ['<call template="classify"><arg>t</arg></call>',
                                   '<call template="count"><arg>t</arg></call>',  # returns="object"
                                   '<call template="nosuch"/>'])  # unknown: TD501 says so, not TD703
def test_a_declared_or_unknown_output_is_not_reported(project, capsys, first):
    (project / "main.task.xml").write_text(sequential(first))
    assert checked(capsys) == []


def test_a_change_of_the_templates_output_changes_the_callers_diagnostic(project, capsys):
    (project / "main.task.xml").write_text(sequential('<call template="slug"><arg>hi</arg></call>'))
    assert len(checked(capsys)) == 1
    (project / "lib.task.xml").write_text(LIB.replace(
        "<command>printf '%s' {{text}}</command>", "<command>printf '%s' {{text}}</command><output_format type=\"json\"/>"))
    assert checked(capsys) == []


def test_a_member_of_last_output_after_a_plain_text_step_is_reported_and_the_run_fails_there(project, capsys):
    (project / "main.task.xml").write_text(sequential(
        '<task type="script"><command>echo plain text</command></task>',
        '    <task type="script"><command>echo "title: {{last_output.title}}"</command></task>\n'))
    assert checked(capsys) == [
        "main.task.xml:4:47: warning TD703 {{last_output.title}} reads the output of the <task> before it as JSON, "
        "which that task does not declare (<output_format type=\"json\"/>): the run fails with \"'last_output' is "
        "text, not JSON\" when it does not parse as JSON; add the declaration to that task"]
    assert main(["run", "main.task.xml", "--yes", "-q"]) != 0
    assert "'last_output' is text, not JSON" in capsys.readouterr().err
    # after a step that declares JSON, nothing is reported
    (project / "main.task.xml").write_text(sequential(
        '<task type="script"><command>echo \'{"title": "t"}\'</command><output_format type="json"/></task>',
        '    <task type="script"><command>echo "title: {{last_output.title}}"</command></task>\n'))
    assert checked(capsys) == []
