"""Every refusal the compiler (evaluator/compiler.py, and plan.py's root) still spells out is a question the checker
decides: behind the gate it is unreachable. For each one, a template that would reach it: `taskdsl
check` reports the code, and `taskdsl run` refuses with the checker's own lines before any step
(the compiler never gets to refuse it). A new `self.fail("TD…")` in the compiler without a case
here fails `test_every_compiler_refusal_has_a_case`."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from generated_projects import projects
from test_gate import MARKER_STEP, check_lines, project, run_refusal
from taskdsl.evaluator import compiler, plan
from taskdsl.evaluator.plan import TemplateErrors
from taskdsl.evaluator.runner import prepare_file

GREET = '<template name="greet" params="a"><task><description>Hi {{a}}</description></task></template>'


def steps(*parts: str) -> str:
    return (f'<task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}'
            f'{"".join(parts)}</steps></task>')


def calling(lib: str) -> dict[str, str]:
    "main runs the marker step, then calls greet of a library file that holds the fault"
    return {"main.task.xml": steps('<call template="greet"><arg name="a">x</arg></call>'), "lib.task.xml": lib}


ATOMIC = "<task><description>d</description></task>"
#: code the compiler refuses with → (what it is, the project)
CASES = {
    "TD100": [("a root that runs nothing", {"main.task.xml": "<steps><task><description>d</description></task></steps>"})],
    "TD101": [("a case holding no task but a description", {"main.task.xml": steps(
        '<cond><case test="output.ok == true"><description>x</description></case></cond>')})],
    "TD206": [("a case with no task", {"main.task.xml": steps('<cond><case test="output.ok == true"></case></cond>')}),
              ("a cond with no case", {"main.task.xml": steps("<cond></cond>")})],
    "TD105": [("a ref that is no name", {"main.task.xml": steps('<task ref="Bad Name"/>')}),
              ("a misspelt type", {"main.task.xml": steps('<task type="sequental"><description>d</description></task>')}),
              ("a timeout that is no number", {"main.task.xml": steps(
                  '<task type="script"><description>d</description><command timeout="soon">echo hi</command></task>')}),
              ("fail_on_error neither true nor false", {"main.task.xml": steps(
                  '<task type="script"><description>d</description><command fail_on_error="maybe">echo hi</command>'
                  '</task>')}),
              ("a blank model", {"main.task.xml": steps("<task><description>d</description><model> </model></task>")}),
              ("a call of no name", {"main.task.xml": steps('<call template="Bad Name"/>')})],
    "TD204": [("an atomic task with a blank description", {"main.task.xml": steps(
        "<task><description>  </description></task>")})],
    "TD201": [("a sequential with no steps", {"main.task.xml": steps(
        '<task type="sequential"><description>d</description></task>')})],
    "TD202": [("a reduce with no parts", {"main.task.xml": steps('<task type="reduce"><description>d</description></task>')})],
    "TD203": [("a script with a blank command", {"main.task.xml": steps(
        '<task type="script"><description>d</description><command>  </command></task>')})],
    "TD601": [("an unknown built-in model", {"main.task.xml": steps(
        "<task><description>d</description><model>taskdsl/echoo</model></task>")})],
    "TD209": [("the legacy call form", {"main.task.xml": steps('<call task="greet"/>'),
                                        "lib.task.xml": f"<library>{GREET}</library>"})],
    "TD104": [("a call with no template", {"main.task.xml": steps("<call/>")})],
    "TD501": [("a call of a name nothing defines", {"main.task.xml": steps('<call template="nosuch"/>')})],
    "TD503": [("an argument naming no param", {"main.task.xml": steps(
        '<call template="greet"><arg name="zz">v</arg></call>'), "lib.task.xml": f"<library>{GREET}</library>"})],
    "TD402": [("a name nothing binds", {"main.task.xml": steps("<task><description>{{zz}}</description></task>")})],
    "TD403": [("a from naming nothing", {"main.task.xml": steps(
        '<task ref="greet"><inputs><input name="a" from="zz"/></inputs></task>'),
        "lib.task.xml": f"<library>{GREET}</library>"})],
    "TD701": [("a test that does not parse", {"main.task.xml": steps(f'<cond><case test="output.a = = 1">{ATOMIC}</case></cond>')})],
    "TD702": [("a test using what the language lacks", {"main.task.xml": steps(
        f'<cond><case test="foo == 1">{ATOMIC}</case></cond>')})],
    "TD207": [("a template with no name", calling(f'<library>{GREET}<template params="a">{ATOMIC}</template></library>'))],
    "TD102": [("a template with no task", calling(f'<library>{GREET}<template name="t" params=""></template></library>'))],
    "TD107": [("a template with two tasks", calling(
        f'<library>{GREET}<template name="t" params="">{ATOMIC}{ATOMIC}</template></library>'))],
}


def test_every_compiler_refusal_has_a_case():
    source = "".join(Path(module.__file__).read_text(encoding="utf-8") for module in (compiler, plan))
    refused = set(re.findall(r'self\.fail\("(TD\d{3})"', source)) | set(re.findall(r'CompileError\("(TD\d{3})"', source))
    refused -= {"TD001"}  # a file that is not XML: test_gate's malformed cases
    assert refused <= set(CASES), sorted(refused - set(CASES))


@pytest.mark.parametrize("code,files", [(code, files) for code, cases in CASES.items() for _, files in cases],
                         ids=[f"{code}-{what}" for code, cases in CASES.items() for what, _ in cases])
def test_the_checker_reports_it_and_the_run_refuses_with_its_lines_before_any_step(tmp_path, capsys, monkeypatch,
                                                                                 code, files):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, files)
    expected = check_lines(capsys, ".")
    assert code in {line.split(": error ")[1].split(" ")[0] for line in expected}, expected
    exit_code, refused, err = run_refusal(capsys, "main.task.xml")
    reached = [line for line in expected if line.startswith(("main.task.xml", "lib.task.xml"))]
    assert exit_code == 2, err
    assert refused == reached
    assert not (tmp_path / "ran.marker").exists()
    # without the gate the compiler cannot build it either, and the refusal is still the checker's
    with pytest.raises(TemplateErrors) as without_gate:
        prepare_file(str(tmp_path / "main.task.xml"), check=False)
    assert code in {d.code for d in without_gate.value.diagnostics}



@pytest.mark.parametrize("inherit", ["none", "subset"])
def test_a_template_body_that_inherits_nothing_still_sees_its_params(tmp_path, capsys, monkeypatch, inherit):
    """The upstream corpus's function templates (052_fntemplates_validate_input.xml) isolate their body
    with inherit_context none: the params are the template's own, the run binds them, so the checker
    does not report them (it did: a false TD402 the gate then refused the run with)."""
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": (
        '<template name="validate_input" params="data,rules"><task><description>Validate {{data}} against {{rules}}'
        f'</description><context_management><inherit_context>{inherit}</inherit_context></context_management></task>'
        '</template>')})
    assert check_lines(capsys, ".") == []
    assert main(["run", "main.task.xml", "--model", "taskdsl/echo", "--input", "data=D", "--input", "rules=R"]) == 0
    assert "Validate D against R" in capsys.readouterr().out


def test_a_projects_own_role_template_is_gated_by_the_checker(tmp_path, capsys):
    """A template a project supplies for a role (the reparse template, the memory's matcher) is
    compiled outside a run's gate: the checker is its gate too, and the refusal is its first error
    at its place. ({{zz}} names nothing: the compiler alone accepted it, and the run failed later
    with missing_variable.)"""
    from taskdsl.cli.main import main
    from taskdsl.evaluator.results import TaskError

    path = tmp_path / "matcher.task.xml"
    path.write_text('<library>\n  <template name="m" params="a"><task><description>{{zz}} {{a}}</description></task>'
                    '</template>\n</library>\n')
    main(["check", str(path)])
    checked = [line for line in capsys.readouterr().out.splitlines() if " error TD" in line]
    assert len(checked) == 1 and checked[0].startswith(f"{path}:2:")
    where, said = checked[0].split(": error ")
    with pytest.raises(TaskError) as refused:
        compiler.atomic_of(str(path), "m", "the associative_matching template", "memory_matcher")
    assert refused.value.reason == "memory_matcher"
    assert refused.value.message == f"the associative_matching template {where} does not check: {said}"


def test_two_definitions_of_a_name_are_the_checkers_td502_even_without_the_gate(tmp_path, capsys, monkeypatch):
    """The runtime library's own duplicate refusal (duplicate_task) is not what a run says: the
    checker's TD502 at both definitions is, with or without the gate."""
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": '<library><template name="greet" params=""><task><description>a</description>'
                                        '</task></template><task name="greet"><description>b</description></task>'
                                        '</library>'})
    expected = check_lines(capsys, ".")
    assert [line.split(": error ")[1][:5] for line in expected] == ["TD502", "TD502"]
    exit_code, refused, _ = run_refusal(capsys, "main.task.xml", "--task", "greet")
    assert exit_code == 2 and refused == expected
    with pytest.raises(TemplateErrors) as without_gate:
        prepare_file(str(tmp_path / "main.task.xml"), task="greet", check=False)
    assert [d.code for d in without_gate.value.diagnostics] == ["TD502", "TD502"]


@pytest.mark.parametrize("code,files", [(code, files) for code, cases in CASES.items() for _, files in cases],
                         ids=[f"{code}-{what}" for code, cases in CASES.items() for what, _ in cases])
def test_check_of_the_entry_alone_fails_with_the_lines_the_run_refuses_with(tmp_path, capsys, monkeypatch, code, files):
    """One gate: `taskdsl check main.task.xml` (the entry alone, not the folder) checks every file the
    entry reaches, as the run's gate does, so it fails whenever `taskdsl run main.task.xml` is refused
    and prints the very lines the refusal prints (a fault in a called library file included)."""
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    project(tmp_path, files)
    exit_code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert exit_code == 2 and refused
    assert main(["check", "main.task.xml"]) == 1
    checked = [line for line in capsys.readouterr().out.splitlines() if " error TD" in line]
    assert checked == refused


def test_check_of_an_entry_reports_the_library_file_it_calls(tmp_path, capsys, monkeypatch):
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    project(tmp_path, {
        "main.task.xml": '<task type="sequential" name="main">\n  <steps>\n    <call template="greet"><arg>Ada</arg></call>\n'
                         '  </steps>\n</task>\n',
        "lib.task.xml": '<library>\n  <template name="greet" params="who">\n    <task><instructions>Hi {{whoo}}</instructions>'
                        '</task>\n  </template>\n</library>\n',
        "other.task.xml": "<task><description>{{nothing}}</description></task>",  # not reached: not checked
    })
    assert main(["check", "main.task.xml"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["lib.task.xml:3:28: error TD402 {{whoo}} names nothing visible: template 'greet' sees "
                                "only its params and globals (visible: who); did you mean 'who'?"]
    assert err.splitlines()[-1] == "1 error, 0 warnings in 2 files (1 reached by the templates named)"


def _cli_error_lines(folder: Path, *argv: str) -> tuple[int, list[str]]:
    """(exit code, the " error TD" lines of stdout and stderr) of the command line run in folder."""
    import contextlib
    import io
    import os

    from taskdsl.cli.main import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(here)
    return code, [line for line in (out.getvalue() + err.getvalue()).splitlines() if " error TD" in line]


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(projects())
def test_generated_projects_check_of_the_entry_fails_whenever_the_run_refuses_with_the_same_lines(files):
    """For generated projects (an entry and a library file it may reach): `check main.task.xml` exits 1
    exactly when `run main.task.xml` (its plan: nothing runs) is refused for a template error, and
    prints the lines the refusal prints."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        project(Path(folder), files)
        refused_code, refused = _cli_error_lines(Path(folder), "run", "main.task.xml", "--model", "taskdsl/echo",
                                                 "--plan")
        checked_code, checked = _cli_error_lines(Path(folder), "check", "main.task.xml")
        if refused:
            assert (refused_code, checked_code) == (2, 1) and checked == refused, (files, refused, checked)
        else:
            assert checked_code == 0 and checked == [], (files, checked)


def test_check_fix_of_an_entry_fixes_the_library_file_it_reaches(tmp_path, capsys, monkeypatch):
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": '<task type="sequential" name="main"><steps><call template="greet"><arg>x</arg>'
                                        '</call></steps></task>\n',
                       "lib.task.xml": '<library>\n  <template name="greet" params="who">\n    <task type="script">'
                                       '<command>echo {{who}}</command>\n      <timeout>5</timeout>\n    </task>\n'
                                       '  </template>\n</library>\n'})
    assert main(["check", "--fix", "main.task.xml"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        'lib.task.xml:4:8: fixed TD101 Move the timeout to <command timeout="5">']
    assert '<command timeout="5">echo {{who}}</command>' in (tmp_path / "lib.task.xml").read_text()


def test_check_fix_never_rewrites_a_file_of_another_project_it_reaches(tmp_path, capsys, monkeypatch):
    """A/taskdsl.toml's library_paths reaches B's template: `check --fix A/main.task.xml` reports B's problem as
    the run would refuse it, and leaves B's file as it is (B is another project's to fix; a project's own
    library_paths outside it needs the user's yes for a run, so --fix does not write there either)."""
    from taskdsl.cli.main import main

    (tmp_path / "A").mkdir()
    (tmp_path / "B").mkdir()
    (tmp_path / "A" / "taskdsl.toml").write_text('library_paths = ["../B"]\n', encoding="utf-8")
    (tmp_path / "A" / "main.task.xml").write_text(
        '<task type="sequential" name="main"><steps><call template="greet"><arg>x</arg></call></steps></task>\n',
        encoding="utf-8")
    helper = ('<library>\n  <template name="greet" params="who">\n    <task type="script">'
              '<command>echo {{who}}</command>\n      <timeout>5</timeout>\n    </task>\n  </template>\n</library>\n')
    (tmp_path / "B" / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "B" / "helper.task.xml").write_text(helper, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "A")
    assert main(["check", "--fix", "main.task.xml"]) == 1
    out = capsys.readouterr().out.splitlines()
    helper_path = str(tmp_path / "B" / "helper.task.xml")
    assert f"{helper_path}: not fixed: outside the project of main.task.xml: fix it in its own project " \
           f"(taskdsl check --fix {helper_path})" in out
    assert any(line.startswith(f"{helper_path}:4:8: error TD101 ") for line in out)
    assert (tmp_path / "B" / "helper.task.xml").read_text(encoding="utf-8") == helper
