"""One list of the reasons a run's errors carry (language.vocabulary.ERROR_REASONS): every reason
the code raises is in it, every entry is raised somewhere, the checker holds `<expect_error
reason>` to it (TD704), and docs/testing.md names only reasons from it."""

import ast
import json
import re

from paths import REPO
from taskdsl.cli.main import main
from taskdsl.language.vocabulary import ERROR_REASONS

SOURCE = REPO / "server" / "taskdsl"
#: the position of the reason among a call's arguments (TaskError(type, message, reason, details),
#: failure(message, reason, **details)); a reason named by a constant is read through the constant
REASON_ARGUMENT = {"TaskError": 2, "failure": 1}
CONSTANTS = {"UNSAFE_CODE": "TD801", "READ_CODE": "TD802"}


def raised_reasons() -> dict[str, list[str]]:
    """reason → where the code raises it (file:line), for every TaskError/failure call."""
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in REASON_ARGUMENT:
                continue
            argument = next((k.value for k in node.keywords if k.arg == "reason"), None)
            if argument is None and len(node.args) > REASON_ARGUMENT[name]:
                argument = node.args[REASON_ARGUMENT[name]]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                reason = argument.value
            elif isinstance(argument, ast.Attribute) and argument.attr in CONSTANTS:
                reason = CONSTANTS[argument.attr]
            else:
                continue  # passed on from another error (its own reason was read where it was raised)
            found.setdefault(reason, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_reason_the_code_raises_is_in_the_list_and_every_entry_is_raised():
    raised = raised_reasons()
    assert len(raised) > 30  # the scan finds the calls
    unlisted = {reason: where for reason, where in raised.items() if reason not in ERROR_REASONS}
    assert unlisted == {}, "add these reasons to ERROR_REASONS (language/vocabulary.py)"
    # the runner refuses an unsafe command or read with the rule's own code (a site's .code)
    rule_codes = {code for code in ERROR_REASONS if code.startswith("TD")}
    assert rule_codes <= {"TD801", "TD802", "TD803", "TD804", "TD805"}
    assert sorted(set(ERROR_REASONS) - set(raised) - rule_codes) == []


def test_the_constants_read_as_reasons_are_what_the_code_says():
    from taskdsl.language.shell import UNSAFE_CODE
    from taskdsl.project.confine import READ_CODE

    assert {"UNSAFE_CODE": UNSAFE_CODE, "READ_CODE": READ_CODE} == CONSTANTS


def test_testing_md_names_only_reasons_errors_carry():
    text = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    such_as = re.search(r"with reasons such as\s+([^(]*)", text)
    named = set(re.findall(r'reason="(\w+)"', text)) | set(re.findall(r"`(\w+)`", such_as.group(1)))
    assert len(named) >= 3 and named <= set(ERROR_REASONS), named - set(ERROR_REASONS)


LIBRARY = """<library>
  <task name="boom" type="script">
    <description>Fail</description>
    <command>exit 3</command>
  </task>
</library>
"""


def test_check_reports_a_reason_no_error_carries_and_the_test_runs_with_a_real_one(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "lib.task.xml").write_text(LIBRARY)
    test = ('<tests>\n  <test name="fails" task="boom">\n'
            '    <expect_error type="TASK_FAILURE" reason="exit_code"/>\n  </test>\n</tests>\n')
    (tmp_path / "lib.test.xml").write_text(test)
    assert main(["check", "lib.test.xml"]) == 1
    out, _ = capsys.readouterr()
    assert out == ("lib.test.xml:3:47: error TD704 no error carries the reason 'exit_code' "
                   "(`taskdsl rules TD704` lists the reasons)\n")
    (tmp_path / "lib.test.xml").write_text(test.replace("exit_code", "script_eror"))
    assert main(["check", "--fix", "lib.test.xml"]) == 0  # a typo of one key: the safe fix writes it
    capsys.readouterr()
    assert 'reason="script_error"' in (tmp_path / "lib.test.xml").read_text()
    assert main(["test", "lib.test.xml", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["failed"], report["errors"]) == (1, 0, 0)


def test_the_rule_page_lists_every_reason(capsys):
    assert main(["rules", "TD704"]) == 0
    out = capsys.readouterr().out
    assert all(f"`{reason}`" in out for reason in ERROR_REASONS)
