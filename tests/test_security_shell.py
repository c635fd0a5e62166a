"""No value substituted into a <command> becomes shell syntax, in any quoting context; where no
safe form exists the checker says TD801 and the runner refuses with the same message."""

import asyncio
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator_helpers import run, write
from taskdsl.language import shell
from taskdsl.rules.checker import check_text
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import run_file

SCRIPT = """<task type="script" name="s">
  <command>{command}</command>
  <inputs><input name="x">placeholder</input></inputs>
</task>"""


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "TASKDSL_MODEL": "taskdsl/echo"})


@pytest.mark.parametrize("command", ['echo "{{x}}"', "echo `echo {{x}}`", 'echo "$(echo "{{x}}")"'])
def test_the_reported_injections_run_the_value_not_the_command(tmp_path, command):
    marker = tmp_path / "p"
    hostile = f"$(touch {marker})`touch {marker}`"
    path = write(tmp_path, "t.task.xml", SCRIPT.format(command=command))
    done = cli("run", path, "--input", f"x={hostile}")
    assert (done.returncode, done.stdout) == (0, hostile + "\n")
    assert not marker.exists()


def test_single_quotes_are_refused_by_the_checker_and_the_runner(tmp_path):
    marker = tmp_path / "p"
    path = write(tmp_path, "t.task.xml", SCRIPT.format(command="echo 'value: {{x}}'"))
    done = cli("run", path, "--input", f"x='; touch {marker}; '")
    message = ("{{x}} is inside '…', where nothing is expanded: no value can be substituted there safely; "
               "close the quotes around it: '…'{{x}}'…'")
    assert done.returncode == 2
    assert f"t.task.xml:2:25: error TD801 {message}" in done.stderr
    assert not marker.exists()
    with pytest.raises(TaskError) as info:  # without the checker, the runner refuses the same way
        asyncio.run(run_file(path, inputs={"x": f"'; touch {marker}; '"}, check=False))
    assert (info.value.type, info.value.reason, info.value.message) == ("VALIDATION_ERROR", "TD801", f"task 's': {message}")
    assert not marker.exists()


def test_the_quick_fix_closes_the_quotes_and_the_fixed_command_runs_the_value(tmp_path):
    text = SCRIPT.format(command="printf 'value: {{x}}!'")
    [diagnostic] = [d for d in check_text(text).diagnostics if d.code == "TD801"]
    [fix] = diagnostic.fixes
    assert not fix.safe  # inside an awk or jq program the value would become code: offered, never applied by --fix
    from taskdsl.language.diagnostics import apply_edits
    fixed = apply_edits(text, fix.edits)
    assert "<command>printf 'value: '{{x}}'!'</command>" in fixed
    path = write(tmp_path, "t.task.xml", fixed)
    marker = tmp_path / "p"
    result = asyncio.run(run_file(path, inputs={"x": f"'$(touch {marker})"}))
    assert result.content == f"value: '$(touch {marker})!"
    assert not marker.exists()


async def test_a_model_answer_in_last_output_stays_a_value(tmp_path):
    marker = tmp_path / "p"
    result, _ = await run(tmp_path, f"""
        <task type="sequential" name="pipe">
          <description>pipe</description>
          <steps>
            <task><description>say $(touch {marker}) and `touch {marker}`</description></task>
            <task type="script"><command>printf '%s' "{{{{last_output}}}}" | wc -c; echo {{{{last_output}}}}</command></task>
          </steps>
        </task>""")
    answer = f"say $(touch {marker}) and `touch {marker}`"
    assert result.content.split("\n", 1) == [str(len(answer.encode())), answer]
    assert not marker.exists()


@pytest.mark.parametrize("command, context", [
    ("cat <<'EOF'\n{{x}}\nEOF", "quoted_heredoc"), ('cat <<"EOF"\n{{x}}\nEOF', "quoted_heredoc"),
    ("cat <<\\EOF\n{{x}}\nEOF", "quoted_heredoc"), ("cat <<{{x}}\nhi\n", "heredoc_word"),
    ("echo \\{{x}}", "escaped"), ('echo "\\{{x}}"', "escaped"), ("echo ${{x}}", "dollar"),
    ("echo ${A:-{{x}}}", "parameter"), ("echo $(( {{x}} + 1 ))", "arithmetic"), ("echo $'{{x}}'", "single"),
    ("echo \"$(echo '{{x}}')\"", "single"), ("echo 'a\n{{x}}", "single"),
])
def test_contexts_without_a_safe_form(command, context):
    [site] = shell.sites(command)
    assert site.context == context and not site.safe
    assert [d.code for d in check_text(SCRIPT.format(command=command.replace("<", "&lt;"))).diagnostics
            if d.severity.value == "error"] == ["TD801"]


def test_the_rendered_command_is_what_runs():
    rendered = shell.substitute('echo {{a}} "b {{b}}" # {{c}}\ncat <<E\n{{d}}\nE', ["1", "2", "3", "4"])
    assert rendered.text == ('echo "${TASKDSL_SUB_1}" "b ${TASKDSL_SUB_2}" # "${TASKDSL_SUB_3}"\n'
                             'cat <<E\n${TASKDSL_SUB_4}\nE')
    assert rendered.env == {"TASKDSL_SUB_1": "1", "TASKDSL_SUB_2": "2", "TASKDSL_SUB_3": "3", "TASKDSL_SUB_4": "4"}
    assert rendered.shown().startswith("TASKDSL_SUB_1=1 TASKDSL_SUB_2=2 TASKDSL_SUB_3=3 TASKDSL_SUB_4=4 /bin/sh -c ")


def test_the_planned_command_shows_which_placeholder_each_variable_holds():
    assert shell.planned('grep -c "{{word}}" {{file}}').shown() == (
        "TASKDSL_SUB_1='{{word}}' TASKDSL_SUB_2='{{file}}' /bin/sh -c 'grep -c \"${TASKDSL_SUB_1}\" \"${TASKDSL_SUB_2}\"'")
    with pytest.raises(shell.UnsafeCommand) as info:
        shell.planned("echo '{{x}}'")
    assert str(info.value).startswith("{{x}} is inside '…'")


# ---------------------------------------------------------------- every context, hostile values

#: (command writing what it received to the file out, what out then holds for a value v)
ACCEPTED = [
    ("printf '%s' {{x}} > out", lambda v: v),
    ("printf '%s' \"{{x}}\" > out", lambda v: v),
    ("printf '%s' \"<{{x}}>\" > out", lambda v: f"<{v}>"),
    ("printf '%s' \"a\"{{x}}'b' > out", lambda v: f"a{v}b"),
    ("v={{x}}; printf '%s' \"$v\" > out", lambda v: v),
    (": `printf '%s' {{x}} > out`", lambda v: v),
    (": \"`printf '%s' \"{{x}}\" > out`\"", lambda v: v),
    (": $(printf '%s' {{x}} > out)", lambda v: v),
    (": \"$(printf '%s' \"{{x}}\" > out)\"", lambda v: v),
    ("cat > out <<EOF\n{{x}}\nEOF", lambda v: v + "\n"),
    ("cat > out <<-EOF\n\t[{{x}}]\n\tEOF", lambda v: f"[{v}]\n"),
    (": # {{x}} ; touch MARKER\nprintf '%s' {{x}} > out", lambda v: v),
]
REFUSED = ["printf '%s' '{{x}}' > out", "cat > out <<'EOF'\n{{x}}\nEOF", "printf '%s' $(( {{x}} )) > out",
           "printf '%s' ${y:-{{x}}} > out", "printf '%s' \\{{x}} > out"]

HOSTILE = ["$(touch MARKER)", "`touch MARKER`", "'", '"', "\n", ";", "; touch MARKER #", "\x00", "\udcff",
           "\\", "${IFS}", "*", "EOF", "\nEOF\ntouch MARKER\n", "'\"'\"'; touch MARKER; '", "}}", "$((1+1))"]
values = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=5)), max_size=6).map("".join)


def run_command(folder, command, value):
    path = os.path.join(folder, "t.task.xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCRIPT.format(command=command.replace("&", "&amp;").replace("<", "&lt;")))
    return asyncio.run(run_file(path, inputs={"x": value}, model="taskdsl/echo", check=False))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(range(len(ACCEPTED))), value=values)
def test_a_hostile_value_reaches_the_command_byte_for_byte(tmp_path_factory, case, value):
    folder = str(tmp_path_factory.mktemp("run"))
    marker = os.path.join(folder, "MARKER")
    template, expected = ACCEPTED[case]
    command = template.replace("MARKER", marker)
    value = value.replace("MARKER", marker)
    assert shell.unsafe_sites(command) == []
    try:
        run_command(folder, command, value)
    except TaskError as error:  # only a NUL byte cannot be passed to a process at all
        assert "\x00" in value and "script cannot start" in error.message
    else:
        with open(os.path.join(folder, "out"), "rb") as f:
            assert f.read() == os.fsencode(expected(value))
    assert not os.path.exists(marker)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(REFUSED), value=values)
def test_a_context_without_a_safe_form_is_refused_whatever_the_value(tmp_path_factory, command, value):
    folder = str(tmp_path_factory.mktemp("run"))
    marker = os.path.join(folder, "MARKER")
    with pytest.raises(TaskError) as info:
        run_command(folder, command, value.replace("MARKER", marker))
    assert info.value.reason == "TD801"
    assert not os.path.exists(marker) and not os.path.exists(os.path.join(folder, "out"))
