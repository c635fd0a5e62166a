"""TD806: a script that reads $TASKDSL_INPUT_<NAME> the task does not export. TD801 tells a user to read a value
from $TASKDSL_INPUT_<NAME>; for a name the script only inherits (an input of the sequential around it) the
variable was unset, and the command ran on with an empty value, silently. Through the real command line."""

import os
import subprocess
import sys

import pytest

PAGE = """<task type="sequential" name="page">
  <description>Page the on-call</description>
  <inputs><input name="ticket">prod is down</input></inputs>
  <steps>
    <task type="script">
      <description>say it</description>
      <command>echo "PAGE: $TASKDSL_INPUT_TICKET"</command>
    </task>
  </steps>
</task>
"""


def taskdsl(folder, *args):
    env = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    done = subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("")
    return tmp_path


def test_an_inherited_name_read_from_the_environment_is_reported_and_the_fix_declares_it(project):
    (project / "page.task.xml").write_text(PAGE)
    assert taskdsl(project, "run", "page.task.xml", "--yes")[1] == "PAGE: \n"  # what a user got: an empty value
    code, out, _ = taskdsl(project, "check", "page.task.xml")
    assert out.splitlines() == [
        "page.task.xml:7:29: warning TD806 $TASKDSL_INPUT_TICKET is not set for this script: 'ticket' is visible here "
        "but not an input of the task, and only its inputs are in its environment; declare it "
        "(<input name=\"ticket\" from=\"ticket\"/>) or write {{ticket}}"]
    code, out, _ = taskdsl(project, "check", "--fix", "page.task.xml")
    assert out.splitlines() == ["page.task.xml:7:29: fixed TD806 Declare 'ticket' as an input of this script task"]
    assert (project / "page.task.xml").read_text() == PAGE.replace(
        '      <command>', '      <inputs><input name="ticket" from="ticket"/></inputs>\n      <command>')
    assert taskdsl(project, "check", "page.task.xml")[1] == ""
    assert taskdsl(project, "run", "page.task.xml", "--yes")[1] == "PAGE: prod is down\n"


def test_a_misspelt_name_gets_the_names_the_task_sets(project):
    (project / "t.task.xml").write_text("""<task type="script" name="t">
  <description>d</description>
  <inputs><input name="level">3</input></inputs>
  <command>echo "$TASKDSL_INPUT_LEVLE ${TASKDSL_INPUT_OTHER:-x}"</command>
</task>
""")
    code, out, _ = taskdsl(project, "check", "t.task.xml")
    assert out.splitlines() == [
        "t.task.xml:4:19: warning TD806 $TASKDSL_INPUT_LEVLE is not set for this script: no input of the task is "
        "named 'levle'; did you mean $TASKDSL_INPUT_LEVEL?",
        "t.task.xml:4:41: warning TD806 $TASKDSL_INPUT_OTHER is not set for this script: no input of the task is "
        "named 'other' (it sets $TASKDSL_INPUT_LEVEL)"]


def test_what_the_caller_binds_is_exported_and_not_reported(project):
    (project / "lib.task.xml").write_text("""<library>
  <template name="shout" params="word">
    <task type="script"><description>d</description><command>echo "$TASKDSL_INPUT_WORD" | tr a-z A-Z</command></task>
  </template>
  <task name="count" type="reduce">
    <description>d</description>
    <inputs><input name="a">x</input><input name="b">y</input></inputs>
    <initial_value>0</initial_value>
    <inner_task type="script"><description>d</description><inputs><input name="current_data"/></inputs>
      <command>printf %s "$TASKDSL_INPUT_CURRENT_DATA" | wc -c</command></inner_task>
    <reduction_task type="script"><description>d</description>
      <command>echo $(( TASKDSL_INPUT_ACCUMULATOR + 0 ))"$TASKDSL_INPUT_CURRENT_RESULT"</command></reduction_task>
  </task>
</library>
""")
    code, out, _ = taskdsl(project, "check", "lib.task.xml")
    assert "TD806" not in out
    code, out, _ = taskdsl(project, "run", "lib.task.xml", "--task", "shout", "--input", "word=hi", "--yes")
    assert out == "HI\n"


def test_the_name_is_read_wherever_it_stands_not_only_after_a_dollar(project):
    """`${#NAME}`, `$((NAME + 1))`, `${!NAME}` and code of another language read the variable too: a misspelt name
    there ran on with an empty value (a reduce returned the wrong item, marked done)."""
    (project / "r.task.xml").write_text("""<task type="script" name="r">
  <description>d</description>
  <inputs><input name="accumulator">1</input></inputs>
  <command>echo ${#TASKDSL_INPUT_ACUMULATOR} $((TASKDSL_INPUT_ACUMULATOR + 1)) "$TASKDSL_INPUT_ACCUMULATOR"; python3 -c 'import os; print(os.environ.get("TASKDSL_INPUT_ACUMULATOR"))'</command>
</task>
""")
    code, out, _ = taskdsl(project, "check", "r.task.xml")
    message = ("warning TD806 $TASKDSL_INPUT_ACUMULATOR is not set for this script: no input of the task is named "
               "'acumulator'; did you mean $TASKDSL_INPUT_ACCUMULATOR?")
    assert out.splitlines() == [f"r.task.xml:4:{column}: {message}" for column in (20, 49, 155)]
