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
