"""Messages a newcomer meets first, through the real command line: each says what to write."""

import pytest

from taskdsl.cli.main import main

ESCAPES = ("in a command write '&' as '&amp;', '<' as '&lt;' and '>' as '&gt;' ('2>&1' is '2&gt;&amp;1', '&&' is "
           "'&amp;&amp;'), or wrap the whole command in <![CDATA[ … ]]>")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    return tmp_path


def check(capsys, *args):
    code = main(["check", *args])
    return code, capsys.readouterr().out.splitlines()


def script(command: str, extra: str = "") -> str:
    return f'<task type="script" name="t">\n  <command>{command}</command>\n{extra}</task>\n'


@pytest.mark.parametrize("command,where,said", [
    ("echo hi >&2", "2:21", "a literal '&' must be written '&amp;'"),
    ("true && echo ok", "2:18", "a literal '&' must be written '&amp;'"),
    ("sort < in.txt", "2:17", "'<' must start a tag name; write '&lt;' for a literal '<'"),
])
def test_a_shells_ampersand_or_less_than_in_a_command_says_how_to_write_it(project, capsys, command, where, said):
    (project / "t.task.xml").write_text(script(command))
    assert check(capsys, "t.task.xml") == (1, [f"t.task.xml:{where}: error TD001 {said}: {ESCAPES}"])


def test_outside_a_command_the_message_stays_short_and_cdata_runs_as_written(project, capsys):
    (project / "t.task.xml").write_text("<task name=\"t\">\n  <description>a & b</description>\n</task>\n")
    assert check(capsys, "t.task.xml") == (1, ["t.task.xml:2:18: error TD001 a literal '&' must be written '&amp;'"])
    (project / "t.task.xml").write_text(script("<![CDATA[true && echo ok 2>&1]]>"))
    assert check(capsys, "t.task.xml") == (0, [])
    assert main(["run", "t.task.xml", "-q"]) == 0
    assert capsys.readouterr().out == "ok\n"


def test_a_backslash_escaped_quote_in_an_attribute_names_the_quoting_fix(project, capsys):
    (project / "nap.test.xml").write_text('<tests>\n  <test name="naps" task="nap">\n'
                                          '    <expect test="output == \\"woke\\""/>\n  </test>\n</tests>\n')
    assert check(capsys, "nap.test.xml") == (1, [
        "nap.test.xml:3:31: error TD001 the attribute value before this ends at its closing quote and what follows is "
        "not another attribute: write a '\"' inside a \"…\" value as '&quot;' (a backslash does not escape it in XML), "
        "or quote the value with '…' instead (test='output == \"woke\"'); attributes are separated by a space"])


def test_a_timeout_element_in_a_script_points_at_the_command_attribute_and_the_fix_moves_it(project, capsys):
    (project / "t.task.xml").write_text(script("sleep 0", "  <timeout>5</timeout>\n"))
    code, out = check(capsys, "t.task.xml")
    assert code == 1 and len(out) == 1
    assert out[0].startswith('t.task.xml:3:4: error TD101 <timeout> is not allowed in <task>: a script\'s timeout is '
                             'the attribute of its command, <command timeout="5"> (seconds); allowed here: description,')
    assert main(["check", "--fix", "t.task.xml"]) == 0
    assert "fixed TD101 Move the timeout to <command timeout=\"5\">" in capsys.readouterr().out
    assert (project / "t.task.xml").read_text() == '<task type="script" name="t">\n  <command timeout="5">sleep 0</command>\n</task>\n'


LIB = """<library>
  <template name="slug" params="text">
    <task type="script"><command>printf '%s' {{text}}</command></task>
  </template>
  <task name="reply">
    <instructions>Write a polite reply to: {{ticket}}</instructions>
    <inputs><input name="ticket"/></inputs>
  </task>
</library>
"""


def run(capsys, *args):
    code = main(["run", *args])
    out, err = capsys.readouterr()
    return code, err


def test_running_a_test_file_says_to_use_taskdsl_test(project, capsys):
    (project / "t.task.xml").write_text(script("echo hi"))
    (project / "t.test.xml").write_text('<tests>\n  <test name="hi" task="t">\n    <expect test=\'output == "hi"\'/>\n'
                                        '  </test>\n</tests>\n')
    assert run(capsys, "t.test.xml") == (2, "taskdsl run: t.test.xml: TD100 <tests> is a test file, not a runnable root: "
                                            "run its tests with taskdsl test t.test.xml\n")
    assert main(["test", "t.test.xml"]) == 0


def test_a_templates_missing_argument_gets_the_input_hint_and_globals_are_not_listed_as_its_inputs(project, capsys):
    (project / "taskdsl.toml").write_text('globals = { team = "ops" }\n')
    (project / "lib.task.xml").write_text(LIB)
    assert run(capsys, "lib.task.xml", "--task", "slug") == (
        1, "taskdsl run: VALIDATION_ERROR (arguments): template 'slug' is missing argument(s): text: pass it from the "
           "caller or with --input text=…\n")
    assert run(capsys, "lib.task.xml", "--task", "slug", "--input", "text=x", "--input", "extra=1") == (
        2, "taskdsl run: VALIDATION_ERROR (unknown_input): cannot run 'slug': unknown input 'extra'; it takes 'text' "
           "(and the global 'team')\n")
    assert main(["run", "lib.task.xml", "--task", "slug", "--input", "text=x", "--input", "team=y", "-q"]) == 0
    assert capsys.readouterr().out == "x\n"


def test_a_type_subtype_key_explains_that_it_needs_subtype_written(project, capsys):
    (project / "lib.task.xml").write_text(LIB)
    (project / "k.task.xml").write_text('<task type="sequential" name="k">\n  <steps>\n    <task ref="atomic:standard">'
                                        '<inputs><input name="ticket">hi</input></inputs></task>\n  </steps>\n</task>\n')
    assert check(capsys, "k.task.xml") == (1, [
        "k.task.xml:3:16: error TD501 no task or template has the type:subtype key 'atomic:standard' in the library; "
        "a key counts only the tasks and templates that write subtype= (<task name=\"…\" subtype=\"standard\">): add "
        "it to the one meant, or ref it by name"])
    (project / "lib.task.xml").write_text(LIB.replace('<task name="reply">', '<task name="reply" subtype="standard">'))
    assert check(capsys, "k.task.xml") == (0, [])
    assert main(["rules", "TD501"]) == 0
    assert "`library_paths` in `taskdsl.toml`" in capsys.readouterr().out


def test_a_repeated_test_says_how_many_runs_passed(project, capsys):
    (project / "t.task.xml").write_text(script("echo hi"))
    (project / "t.test.xml").write_text('<tests>\n  <test name="hi" task="t">\n    <expect test=\'output == "hi"\'/>\n'
                                        '  </test>\n</tests>\n')
    assert main(["test", "t.test.xml", "--repeat", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "PASS t.test.xml::hi: 3/3 runs passed (min_pass 1)"
    assert main(["test", "t.test.xml"]) == 0  # once: nothing more to say
    assert capsys.readouterr().out.splitlines()[0] == "PASS t.test.xml::hi"
