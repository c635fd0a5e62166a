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


@pytest.mark.parametrize("command", ['echo "{{x}}"', 'echo "$(echo "{{x}}")"'])
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
               "read the value from the environment variable $TASKDSL_INPUT_X instead (awk: ENVIRON[\"…\"], or "
               "\"$…\" outside the quotes)")
    assert done.returncode == 2
    assert f"t.task.xml:2:25: error TD801 {message}" in done.stderr
    assert not marker.exists()
    with pytest.raises(TaskError) as info:  # without the checker, the runner refuses the same way
        asyncio.run(run_file(path, inputs={"x": f"'; touch {marker}; '"}, check=False))
    assert (info.value.type, info.value.reason, info.value.message) == ("VALIDATION_ERROR", "TD801", f"task 's': {message}")
    assert not marker.exists()


def test_no_quick_fix_closes_the_quotes(tmp_path):
    # closing '…' around the value put it into an awk, sed or jq program as code: no fix is offered at all
    text = SCRIPT.format(command="printf 'value: {{x}}!'")
    [diagnostic] = [d for d in check_text(text).diagnostics if d.code == "TD801"]
    assert diagnostic.fixes == []


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
    ("cat <<\\EOF\n{{x}}\nEOF", "quoted_heredoc"), ("cat <<{{x}}\nhi\n", "parse_error"),
    ("echo \\{{x}}", "escaped"), ('echo "\\{{x}}"', "escaped"), ("echo ${{x}}", "dollar"),
    ("echo ${A:-{{x}}}", "parameter"), ("echo $(( {{x}} + 1 ))", "arithmetic"), ("echo $'{{x}}'", "parse_error"),
    ("echo \"$(echo '{{x}}')\"", "single"), ("echo 'a\n{{x}}", "parse_error"),
    ("[[ {{x}} -gt 3 ]]", "parse_error"), ("let n={{x}}", "arithmetic"),
    ("declare -i n={{x}}", "arithmetic"), ("a[{{x}}]=1", "arithmetic"), ("(( {{x}} ))", "parse_error"),
    ("unset {{x}}", "name"), ("printf -v {{x}} %s 1", "name"), ('echo $"{{x}}"', "unparsed"),
])
def test_contexts_without_a_safe_form(command, context):
    [site] = shell.sites(command)
    assert site.context == context and not site.safe
    assert [d.code for d in check_text(SCRIPT.format(command=command.replace("<", "&lt;"))).diagnostics
            if d.severity.value == "error"] == ["TD804" if context == "parse_error" else "TD801"]


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
    (": $(printf '%s' {{x}} > out)", lambda v: v),
    (": \"$(printf '%s' \"{{x}}\" > out)\"", lambda v: v),
    ("cat > out <<EOF\n{{x}}\nEOF", lambda v: v + "\n"),
    ("cat > out <<-EOF\n\t[{{x}}]\n\tEOF", lambda v: f"[{v}]\n"),
    (": # {{x}} ; touch MARKER\nprintf '%s' {{x}} > out", lambda v: v),
]
REFUSED = ["printf '%s' '{{x}}' > out", ": `printf '%s' {{x}} > out`", ": \"`printf '%s' \"{{x}}\" > out`\"", "cat > out <<'EOF'\n{{x}}\nEOF", "printf '%s' $(( {{x}} )) > out",
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


# ---------------------------------------------------------------- a grammar of shell constructs

#: sinks: (command writing what it received to out, what out then holds for a value v)
SINKS = [
    ("printf '[%s]' {{x}} >> out", lambda v: f"[{v}]"),
    ("printf '[%s]' \"<{{x}}>\" >> out", lambda v: f"[<{v}>]"),
    ("printf '[%s]' a{{x}}'b' >> out", lambda v: f"[a{v}b]"),
    ("cat >> out <<EOF\n[{{x}}]\nEOF\n", lambda v: f"[{v}]\n"),
    ("printf '[%s]' \"$(printf '%s' {{x}})\" >> out", lambda v: "[" + v.rstrip("\n") + "]"),
    ("[ {{x}} = a ] || printf '[%s]' {{x}} >> out", lambda v: "" if v == "a" else f"[{v}]"),
    ("[[ {{x}} == a ]] || printf '[%s]' {{x}} >> out", None), ("[[ a > {{x}} ]]; printf '[%s]' a >> out", None),
    ("printf '[%s]' $(( {{x}} )) >> out", None), ("let n={{x}}; printf '[%s]' {{x}} >> out", None),
    ("[[ {{x}} -gt 1 ]]; printf '[%s]' {{x}} >> out", None), ("eval \"printf '[%s]' {{x}}\" >> out", None),
    ("sh -c \"printf '[%s]' {{x}} >> out\"", None), ("printf '%s' {{x}} | sh >> out", None),
    ("printf '[%s]' '{{x}}' >> out", None), ("printf '[%s]' ${y:-{{x}}} >> out", None),
    ("find . -maxdepth 0 -exec sh -c \"printf '[%s]' {{x}} >> out\" \\;", None),
    ("echo | xargs sh -c \"printf '[%s]' {{x}} >> out\"", None),
    ("sh -c 'printf \"[%s]\" \"$1\" >> out' _ {{x}}", lambda v: f"[{v}]"),
    # programs that parse a value again behind wrappers, combined flags, settings, standard input
    ("ionice -c 3 sh -c \"printf '[%s]' {{x}} >> out\"", None),
    ("\"$SHELL\" -c \"printf '[%s]' {{x}} >> out\"", None),
    ("python3 -Ic \"open('out', 'a').write('[%s]' % {{x}})\"", None),
    ("printf '%s' {{x}} | bash -e >> out", None),
    ("printf '%s' {{x}} | xargs -I{} sh -c {} >> out", None),
    ("env {{x}} printf '[%s]' a >> out", None),
    ("tar --to-command={{x}} -cf /dev/null /dev/null; printf '[%s]' a >> out", None),
    ("printf '[%s]' a\\\n{{x}} >> out", None),
    ("nice -n 1 flock lock sh -c 'printf \"[%s]\" \"$1\" >> out' _ {{x}}", lambda v: f"[{v}]"),
    ("printf '[%s]' \\\n  {{x}} >> out", lambda v: f"[{v}]"),
    ("printf '%s' {{x}} | xargs -0 sh -c 'printf \"[%s]\" \"$1\" >> out' _", lambda v: f"[{v}]"),
    ("printf '%s' {{x}} | sh -c sh >> out", None),
    ("BASH_ENV={{x}} bash -c true; printf '[%s]' a >> out", None),
    ("printf '%s' {{x}} | bash /dev/stdin >> out", None),
    # the fifth review: brace expansion, bash's variable-name options, make's operands, module options, aliases
    ("printf '[%s]' {a,{{x}}} >> out", None), ("env {printf,'[%s]',{{x}}} >> out", None),
    ("printf '[%s]' \"{a,b}\" {{x}} >> out", lambda v: f"[{{a,b}}][{v}]"),
    ("printf {{x}} >> out", None), ("printf -- '[%s]' {{x}} >> out", lambda v: f"[{v}]"),
    ("make -s -f /dev/null X={{x}} >> out", None), ("make -s -f /dev/null -- {{x}} >> out", None),
    ("node --import={{x}} -e 0 >> out", None), ("python3 -m {{x}} >> out", None),
    ("wget -q -e {{x}} http://127.0.0.1:9/ >> out", None),
    # values handed on: the positional parameters, variables, files, the environment's code-read families
    ("set -- sh -c \"printf '[%s]' {{x}} >> out\"; \"$@\"", None),
    ("{ set -- {{x}}; printf '[%s]' \"$1\" >> out; }", lambda v: f"[{v}]"),
    ("r={{x}}; eval \"printf '[%s]' $r\" >> out", None),
    ("r={{x}}; sh -c 'eval \"$1\"' _ \"$r\" >> out", None),
    ("{ r={{x}}; sh -c 'printf \"[%s]\" \"$1\" >> out' _ \"$r\"; }", lambda v: f"[{v}]"),
    ("r={{x}}; printf '[%s]' \"$r\" | sh >> out", None),
    ("printf '%s' {{x}} > f; sh f >> out", None),
    ("printf '%s' {{x}} > f; sh < f >> out", None),
    ("printf '%s' {{x}} > f; . ./f >> out", None),
    ("printf '[%s]' {{x}} > f; cat f >> out", lambda v: f"[{v}]"),
    ("SHELL={{x}} true; printf '[%s]' a >> out", None),
    ("GIT_DIR={{x}} true; printf '[%s]' a >> out", None),
    ("{ NODE_ENV={{x}}; printf '[%s]' \"$NODE_ENV\" >> out; }", lambda v: f"[{v}]"),
    # the sixth review: eval code built from names, the folder cd is given, files written under names not spelt out,
    # wrappers with subcommands, upper-case variables
    ("r={{x}}; n=r; eval \"t=\\$$n\"; eval \"printf '[%s]' $t\" >> out", None),
    ("cd {{x}}; sh -c \"printf '[%s]' $PWD\" >> out", None),
    ("printf '%s' {{x}} | ( cat > f ); sh f >> out", None),
    ("printf '%s' {{x}} > f; split -b 99 f p; sh paa >> out", None),
    ("uv run sh -c \"printf '[%s]' {{x}}\" >> out", None),
    ("ZIP={{x}} true; printf '[%s]' a >> out", None),
    ("{ zip_opts={{x}}; printf '[%s]' \"$zip_opts\" >> out; }", lambda v: f"[{v}]"),
    # the seventh review: wrappers judged by their options, xargs into a wrapper, names rebound, arithmetic on
    # names, programs reading commands on their input, literal code reading an exported value
    ("env -- {{x}} bash -c \"printf '[%s]' a >> out\"", None), ("env -P /bin {{x}} printf '[%s]' a >> out", None),
    ("sudo {{x}} printf '[%s]' a >> out", None), ("printf '%s' {{x}} | xargs env >> out", None),
    ("printf '%s' {{x}} | xargs nice >> out", None),
    ("printf '%s\\n' {{x}} | xargs -I{} env {} bash -c \"printf '[%s]' a >> out\"", None),
    ("printf '%s\\n' {{x}} | bash -c 'hash -p /bin/sh cat; cat' >> out", None),
    ("printf '%s\\n' {{x}} | bash -c 'BASH_CMDS[cat]=/bin/sh; cat' >> out", None),
    ("ln -sf /bin/sh ./cat; printf '%s\\n' {{x}} | ./cat >> out", None),
    ("n={{x}} bash -c 'declare -i m; m=n; printf \"[%s]\" \"$m\" >> out'", None),
    ("bash -c 'n=$1; declare -i m; m=n; printf \"[%s]\" \"$m\" >> out' _ {{x}}", None),
    ("printf '%s\\n' {{x}} | env -S sh >> out", None),
    ("printf 'eval \"$1\"' > s.sh; sh s.sh {{x}} >> out", None),
    ("x={{x}} git --config-env core.pager=x -p log >> out", None),
    ("env FOO=bar printf '[%s]' {{x}} >> out", lambda v: f"[{v}]"),
    ("nice -n 5 printf '[%s]' {{x}} >> out", lambda v: f"[{v}]"),
    ("printf '%s' {{x}} | xargs -0 printf '[%s]' >> out", lambda v: f"[{v}]" if v else "[]"),
    # the eighth review: a file the command wrote, copied on any way or given to a shell past its options, then run
    ("printf '%s' {{x}} > f; cat f | cat > g; sh g >> out", None),
    ("printf '%s' {{x}} > f; dd if=f of=g 2>/dev/null; sh g >> out", None),
    ("printf '%s' {{x}} > f; base64 f | base64 -d > g; . ./g >> out", None),
    ("printf '%s' {{x}} > f; g() { cat f; }; g > h; sh h >> out", None),
    ("printf '%s' {{x}} > f; sh +e f >> out", None),
    ("printf '%s' {{x}} > f; bash --norc f >> out", None),
    ("printf '[%s]' {{x}} > f; cat f | cat > g; cat g >> out", lambda v: f"[{v}]"),
]
#: wrappers: each places a command S (with {S}) in a construct
WRAPS = [
    "{S}", "case a in a) {S};; esac", 'r="$(case a in a) {S};; esac)"', 'echo "$({S})" > /dev/null',
    ": `{S}`", "( {S} )", "{{ {S}; }}", "f() {{ {S}; }}; f", "true | {S}", "if true; then {S}; fi",
    "for i in 1; do {S}; done", ': ${{q:-"}}"}}; {S}', ': "${{q:-"}}"}}"; {S}', "[[ -n x ]] && {S}",
    "[ -n x ] && {S}", "[[ a < b ]] || {S}", ": {{a,b}}; {S}",
    ": $(( 1 )); {S}", "cat <<EOF >/dev/null\n$(true) {{}} ')\nEOF\n{S}", "while true; do {S}; break; done",
    "x=$(echo \"$(echo \"$({S})\")\")", "! {S}", "{S} # ' \" $(",
    "true \\\n  && {S}", "{S} \\\n  # c",
]
HOSTILE_VALUES = ["$(touch MARKER)", "`touch MARKER`", "'", '"', " ", "\n", "*", "-n", "--help", "a[$(touch MARKER)]",
                  "x; touch MARKER", "\x00", "\udcff", "EOF", "\nEOF\ntouch MARKER\n", "$((1+1))", "\\", "]",
                  "-oProxyCommand=touch MARKER", "--checkpoint-action=exec=touch MARKER", "-Ssh -c 'touch MARKER'",
                  "\\\n", "BASH_ENV=$(touch MARKER)", "A=1 sh -c 'touch MARKER'", "n"]
hostile_values = st.lists(st.one_of(st.sampled_from(HOSTILE_VALUES), st.text(max_size=4)), max_size=5).map("".join)


def check_or_run(tmp_path_factory, sink, wrap, value):
    """The checker refuses the command, or it runs with the value as one word, byte for byte, and nothing
    outside its folder changes."""
    folder = str(tmp_path_factory.mktemp("case"))
    outside = os.path.join(os.path.dirname(folder), "outside.txt")
    if not os.path.exists(outside):
        with open(outside, "w") as f:
            f.write("unchanged")
    marker = os.path.join(folder, "MARKER")
    template, expected = SINKS[sink]
    command = WRAPS[wrap].format(S=template.rstrip("\n") if "<<" not in WRAPS[wrap] else template.rstrip("\n"))
    if "<<EOF" in template and not command.endswith("\n"):
        command += "\n"
    value = value.replace("MARKER", marker)
    errors = [d.code for d in check_text(SCRIPT.format(command=command.replace("&", "&amp;").replace("<", "&lt;")))
              .diagnostics if d.severity.value == "error"]
    if errors:
        assert set(errors) <= {"TD801", "TD803", "TD804", "TD805"}, errors
        with pytest.raises(TaskError) as info:  # without the checker, the runner refuses too
            run_command(folder, command, value)
        assert info.value.reason in ("TD801", "TD803", "TD804", "TD805")
        assert not os.path.exists(marker)
        return "refused"
    assert expected is not None, f"the checker accepts {command!r}"
    try:  # a construct /bin/sh itself rejects (dash has no [[ ]]) says nothing about values
        run_command(folder, command, "plain")
    except TaskError as error:
        assert error.reason == "script_error"
        return "not for /bin/sh"
    if not os.path.exists(os.path.join(folder, "out")):
        return "never reaches the sink in /bin/sh"  # ! [[ … ]] || …: dash has no [[ ]]
    os.remove(os.path.join(folder, "out"))
    try:
        run_command(folder, command, value)
    except TaskError as error:
        assert "\x00" in value and "script cannot start" in error.message
        return "nul"
    finally:
        assert not os.path.exists(marker)
        with open(outside) as f:
            assert f.read() == "unchanged"
    with open(os.path.join(folder, "out"), "rb") as f:
        assert f.read() == os.fsencode(expected(value)), command
    return "ran"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sink=st.sampled_from(range(len(SINKS))), wrap=st.sampled_from(range(len(WRAPS))), value=hostile_values)
def test_commands_from_a_grammar_of_constructs_either_refused_or_the_value_is_one_word(tmp_path_factory, sink, wrap,
                                                                                      value):
    check_or_run(tmp_path_factory, sink, wrap, value)


@pytest.mark.parametrize("sink, wrap", [(s, w) for s in range(len(SINKS)) for w in range(len(WRAPS))])
def test_every_construct_with_the_worst_value(tmp_path_factory, sink, wrap):
    check_or_run(tmp_path_factory, sink, wrap, "$(touch MARKER)`touch MARKER`' \"*\n-n a[$(touch MARKER)]")


# ---------------------------------------------------------------- deep trees

@pytest.mark.parametrize("joint", [" && ", " || ", " | ", "; "])
def test_a_long_list_or_pipeline_of_placeholders_gets_every_code_right(joint):
    """tree-sitter nests `a && b && …` as deep as the list is long; what each placeholder needs from the nodes
    above it is computed once per node, so 2,000 placeholders are analysed (in well under a second) and each
    gets its own verdict."""
    parts = ["printf '%s' {{x}}"] * 2000
    parts[700] = "sh -c \"echo {{x}}\""
    parts[1400] = "echo '{{x}}'"
    parts[1999] = "eval {{x}}"
    command = joint.join(parts)
    found = shell.sites(command)
    assert len(found) == 2000
    codes = {k: site.code for k, site in enumerate(found) if site.code is not None}
    expected = {700: "TD803", 1400: "TD801", 1999: "TD803"}
    if joint == " | ":  # piped into a shell, and into eval, whose code the checker cannot see (it holds a value):
        # fail closed (eval's code runs with the pipe as its standard input)
        expected.update({k: "TD803" for k in range(2000) if k != 1400})
    assert codes == expected
    if joint != " | ":
        diagnostics = [d.code for d in check_text(SCRIPT.format(command=command.replace("&", "&amp;").replace(
            "<", "&lt;"))).diagnostics if d.severity.value == "error"]
        assert sorted(diagnostics) == ["TD801", "TD803", "TD803"]


def test_placeholders_deep_in_nested_compound_commands_get_their_codes():
    command = "if true; then printf '%s' {{x}}; " * 1000 + "sh -c \"{{x}}\"; " + "fi; " * 1000
    found = shell.sites(command)
    assert [site.code for site in found] == [None] * 1000 + ["TD803"]
