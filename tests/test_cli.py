"""`taskdsl check|rules|schema|serve` as a user runs them: output, formats, exit codes, --fix."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskdsl.cli.main import main

BROKEN = '<task typ="atomic">\n  <descripton>Summarize</descripton>\n  <description>x</description>\n</task>\n'
CLEAN = '<task>\n  <description>Summarize the notes</description>\n</task>\n'
WARNS = ('<task>\n  <description>x</description>\n  <context_management>\n'
         '    <inherit_context>none</inherit_context>\n    <fresh_context>disabled</fresh_context>\n'
         '  </context_management>\n</task>\n')


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


# ----------------------------------------------------------------------------- text output


def test_text_output_lines_summary_and_exit_1(workdir, capsys):
    write(workdir / "broken.task.xml", BROKEN)
    code, out, err = run(capsys, "check", "broken.task.xml")
    assert code == 1
    assert out.splitlines() == [
        "broken.task.xml:1:7: error TD103 attribute 'typ' is not allowed on <task> (did you mean 'type'?); "
        "allowed: name, type, ref, subtype",
        "broken.task.xml:2:4: error TD101 <descripton> is not allowed in <task> (did you mean <description>?); "
        "allowed here: instructions, system, model, criteria, output_format, context_management, inputs, file_paths, "
        "steps, initial_value, inner_task, reduction_task, command, manual_xml, disable_reparsing",
    ]
    assert err.strip() == "2 errors, 0 warnings in 1 file"


def test_clean_file_exits_0(workdir, capsys):
    write(workdir / "ok.task.xml", CLEAN)
    assert run(capsys, "check", "ok.task.xml") == (0, "", "0 errors, 0 warnings in 1 file\n")


def test_warnings_alone_exit_0(workdir, capsys):
    write(workdir / "w.task.xml", WARNS)
    code, out, err = run(capsys, "check", "w.task.xml")
    assert code == 0
    assert out.startswith("w.task.xml:1:2: warning TD302 ")
    assert err.strip() == "0 errors, 1 warning in 1 file"


def test_folders_take_task_xml_files_and_explicit_files_any_name(workdir, capsys):
    write(workdir / "proj" / "a.task.xml", CLEAN)
    write(workdir / "proj" / "deep" / "b.task.xml", BROKEN)
    write(workdir / "proj" / "notes.xml", BROKEN)  # not a template by name: skipped in a folder
    write(workdir / "proj" / ".hidden" / "c.task.xml", BROKEN)  # hidden folders are skipped
    write(workdir / "other.xml", CLEAN)
    code, out, err = run(capsys, "check", "proj", "other.xml")
    assert code == 1
    assert {line.split(":")[0] for line in out.splitlines()} == {os.path.join("proj", "deep", "b.task.xml")}
    assert err.strip() == "2 errors, 0 warnings in 3 files"


# ----------------------------------------------------------------------------- path problems


def test_missing_path_is_a_clear_usage_error(workdir, capsys):
    write(workdir / "ok.task.xml", CLEAN)
    code, out, err = run(capsys, "check", "nope.task.xml", "ok.task.xml")
    assert code == 2
    assert "taskdsl: error: nope.task.xml: no such file or directory" in err.splitlines()
    assert "Traceback" not in err


def test_folder_without_templates(workdir, capsys):
    (workdir / "empty").mkdir()
    code, _, err = run(capsys, "check", "empty")
    assert code == 2
    assert "taskdsl: error: empty: no templates (**/*.task.xml, **/*.test.xml) in this folder" in err.splitlines()


def test_non_utf8_file_gets_td001_with_the_byte_offset_and_is_still_checked(workdir, capsys):
    write(workdir / "latin1.task.xml", b"<task>\n  <description>caf\xe9</description>\n  <modle>x</modle>\n</task>\n")
    code, out, _ = run(capsys, "check", "latin1.task.xml")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ("latin1.task.xml:2:19: error TD001 not valid UTF-8 at byte 25 (0xe9): templates are UTF-8; "
                        "the undecodable bytes are shown as U+FFFD")
    assert lines[1].startswith("latin1.task.xml:3:4: error TD101 <modle> is not allowed in <task> (did you mean <model>?)")


def test_binary_file(workdir, capsys):
    write(workdir / "image.task.xml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    code, out, _ = run(capsys, "check", "image.task.xml")
    assert code == 1
    assert out.splitlines() == ["image.task.xml:1:1: error TD001 binary file (a NUL byte at byte 8): this is not a template"]


def test_unreadable_file(workdir, capsys, monkeypatch):
    target = write(workdir / "secret.task.xml", CLEAN)
    real_open = os.open  # the one reader (taskdsl.support.reading) opens with os.open

    def refusing_open(file, *args, **kwargs):
        if os.fspath(file).endswith("secret.task.xml"):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    code, _, err = run(capsys, "check", str(target))
    assert code == 2
    assert f"taskdsl: error: {target}: cannot read: Permission denied" in err.splitlines()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_for_real(workdir, capsys):
    target = write(workdir / "secret.task.xml", CLEAN)
    target.chmod(0)
    code, _, err = run(capsys, "check", "secret.task.xml")
    assert code == 2
    assert "cannot read: Permission denied" in err


# ----------------------------------------------------------------------------- json and sarif


def test_json_format(workdir, capsys):
    write(workdir / "dup.task.xml", "<task>\n  <description>a</description>\n  <description>b</description>\n</task>\n")
    code, out, err = run(capsys, "check", "--format", "json", "dup.task.xml")
    assert code == 1
    assert json.loads(out) == [{
        "path": "dup.task.xml", "line": 3, "column": 4, "endLine": 3, "endColumn": 15,
        "severity": "error", "code": "TD107",
        "message": "<description> may appear only once in <task>; the first one is on line 2: merge them or remove this one",
        "related": [{"message": "first <description> is here", "path": "dup.task.xml",
                     "line": 2, "column": 4, "endLine": 2, "endColumn": 15}],
        "fixes": [],
    }]
    assert err.strip() == "1 error, 0 warnings in 1 file"


def test_json_format_carries_fixes(workdir, capsys):
    write(workdir / "legacy.task.xml", "<task>\n  <description>x</description>\n  <context_management>\n"
                                       "    <inherit_context>false</inherit_context>\n  </context_management>\n</task>\n")
    _, out, _ = run(capsys, "check", "--format=json", "legacy.task.xml")
    [entry] = [e for e in json.loads(out) if e["code"] == "TD305"]
    assert entry["fixes"] == [{"title": "Replace 'false' with 'none'", "safe": True,
                               "edits": [{"line": 4, "column": 22, "endLine": 4, "endColumn": 27, "newText": "none"}]}]


def test_sarif_format(workdir, capsys):
    write(workdir / "broken.task.xml", BROKEN)
    code, out, _ = run(capsys, "check", "--format", "sarif", "broken.task.xml")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    [run_] = sarif["runs"]
    rules = {rule["id"]: rule for rule in run_["tool"]["driver"]["rules"]}
    assert rules["TD101"]["shortDescription"] == {"text": "element not allowed here"}
    assert rules["TD101"]["fullDescription"]["text"].startswith("A child element the grammar does not allow")
    assert "Fix: Rename it" in rules["TD101"]["help"]["text"]
    assert {"TD001", "TD100", "TD107"} <= set(rules)
    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["TD103", "TD101"]
    first = results[0]
    assert first["level"] == "error"
    assert run_["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "TD103"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "broken.task.xml"},
        "region": {"startLine": 1, "startColumn": 7, "endLine": 1, "endColumn": 10},
    }


# ----------------------------------------------------------------------------- --fix


FIXABLE = (
    '<?xml version="1.0"?>\r\n'
    '<!-- keep   this  comment -->\r\n'
    '<task type="sequential">\r\n'
    '\t<description><![CDATA[a < b && c]]>  spaced   text </description>\r\n'
    '  <context_management>\r\n'
    '      <inherit_context>false</inherit_context>   <!-- legacy -->\r\n'
    '    <accumulation_format>full</accumulation_format>\r\n'
    '  </context_management>\r\n'
    "  <steps><task ><description  >one</description></task></steps>\r\n"
    '</task>\r\n'
)


def test_fix_applies_safe_fixes_and_keeps_everything_else_byte_for_byte(workdir, capsys):
    path = write(workdir / "fix.task.xml", FIXABLE)
    code, out, err = run(capsys, "check", "--fix", "fix.task.xml")
    assert code == 0
    assert out.splitlines() == [
        "fix.task.xml:6:24: fixed TD305 Replace 'false' with 'none'",
        "fix.task.xml:7:26: fixed TD306 Replace 'full' with 'full_output'",
    ]
    assert err.strip() == "0 errors, 0 warnings in 1 file; 2 fixes applied"
    expected = FIXABLE.replace(">false<", ">none<").replace(">full<", ">full_output<")
    assert path.read_bytes() == expected.encode("utf-8")


def test_fix_leaves_a_file_without_fixes_untouched(workdir, capsys):
    # no fix: an attribute nothing is close to, a misspelt element beside the one it means
    unfixable = BROKEN.replace('typ="atomic"', 'zq="atomic"')
    path = write(workdir / "broken.task.xml", unfixable)
    before = path.stat().st_mtime_ns
    code, out, _ = run(capsys, "check", "--fix", "broken.task.xml")
    assert code == 1
    assert "fixed" not in out and "error TD103" in out
    assert path.stat().st_mtime_ns == before
    assert path.read_text() == unfixable


def test_fix_keeps_a_byte_order_mark(workdir, capsys):
    path = write(workdir / "bom.task.xml", b"\xef\xbb\xbf" + FIXABLE.encode())
    assert run(capsys, "check", "--fix", "bom.task.xml")[0] == 0
    assert path.read_bytes().startswith(b"\xef\xbb\xbf<?xml")


# ----------------------------------------------------------------------------- rules, schema, serve


def test_rules_lists_every_code(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    assert "TD101  error    element not allowed here" in lines
    assert "TD001  error    not well-formed XML" in lines
    codes = [line.split()[0] for line in lines]
    assert codes == sorted(codes) and len(codes) == len(set(codes))


def test_rules_shows_one_codes_doc(capsys):
    code, out, _ = run(capsys, "rules", "td107")
    assert code == 0
    assert out.startswith("TD107 (error): element repeated where it may appear once\n\nWhat: ")
    assert "Bad:\n    <task>\n      <description>One</description>" in out
    assert "\nFix: Merge the two" in out


def test_rules_unknown_code_suggests(capsys):
    code, out, err = run(capsys, "rules", "TD10")
    assert code == 2 and out == ""
    assert err.strip() == "taskdsl: error: unknown rule code 'TD10'; did you mean TD100 or TD101 or TD102?"
    # a well-formed code no rule has: its hundred's codes, not three look-alike spellings
    from taskdsl.rules import RULES

    nines = sorted(c for c in RULES if c.startswith("TD9"))
    assert run(capsys, "rules", "TD999")[2].strip() == ("taskdsl: error: unknown rule code 'TD999'; the TD9xx codes are "
                                                      f"{nines[0]}–{nines[-1]} (`taskdsl rules` lists every code)")
    assert run(capsys, "rules", "TD420")[2].strip() == "taskdsl: error: unknown rule code 'TD420'; did you mean TD204 or TD402?"


def test_schema_prints_an_existing_xsd(capsys):
    code, out, _ = run(capsys, "schema")
    assert code == 0
    path = Path(out.strip())
    assert path.name == "task.xsd" and path.is_file()
    assert "<xs:schema" in path.read_text(encoding="utf-8")


def test_serve_rejects_a_bad_address(capsys):
    code, _, err = run(capsys, "serve", "--tcp", "localhost:http")
    assert code == 2
    assert "expected [HOST:]PORT with a port from 1 to 65535 (0: any free port), got 'localhost:http'" in err


def test_check_without_a_path_checks_the_current_folder(workdir, capsys):
    write(workdir / "deep" / "b.task.xml", BROKEN)
    write(workdir / "ok.task.xml", CLEAN)
    code, out, err = run(capsys, "check")
    assert code == 1
    assert {line.split(":")[0] for line in out.splitlines()} == {os.path.join("deep", "b.task.xml")}
    assert err.strip() == "2 errors, 0 warnings in 2 files"


def test_usage_errors_exit_2(capsys):
    assert run(capsys, "check", "--format", "xml", "x")[0] == 2
    assert run(capsys)[0] == 2


def test_python_dash_m_and_a_cheap_path_to_the_first_diagnostic(workdir):
    write(workdir / "broken.task.xml", BROKEN)
    probe = ("import sys; from taskdsl.cli.main import main; code = main(['check', 'broken.task.xml']); "
             "heavy = sorted(m for m in ('litellm', 'pygls', 'taskdsl.lsp.server', 'taskdsl.evaluator') if m in sys.modules); "
             "print('HEAVY', heavy, file=sys.stderr); sys.exit(code)")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1
    assert "HEAVY []" in completed.stderr
    module = subprocess.run([sys.executable, "-m", "taskdsl", "check", "broken.task.xml"],
                            capture_output=True, text=True, timeout=60)
    assert module.returncode == 1
    assert module.stdout.startswith("broken.task.xml:1:7: error TD103 ")


def test_check_of_a_folder_scans_each_file_once(tmp_path, monkeypatch, capsys):
    """The index and the check share one parse per file (the CLI used to parse everything twice)."""
    from taskdsl.language import document
    from taskdsl.cli.main import main

    (tmp_path / "lib.task.xml").write_text('<template name="t" params="x"><task><description>{{x}}</description></task></template>\n')
    (tmp_path / "use.task.xml").write_text('<call template="t"><arg>hello</arg></call>\n')
    (tmp_path / "bad.task.xml").write_text('<call template="tt"><arg>hello</arg></call>\n')
    scans = []
    original = document._Scanner.run
    monkeypatch.setattr(document._Scanner, "run", lambda self: scans.append(self.text) or original(self))
    assert main(["check", str(tmp_path)]) == 1
    assert "TD501" in capsys.readouterr().out
    assert sorted(scans) == sorted(p.read_text() for p in tmp_path.iterdir())


def test_run_of_a_library_file_without_task_is_a_usage_error(tmp_path):
    import subprocess
    import sys

    (tmp_path / "lib.task.xml").write_text(
        '<library>\n  <task name="a"><description>a</description></task>\n'
        '  <task name="b"><description>b</description></task>\n</library>\n')
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "lib.task.xml", "--model", "taskdsl/echo", "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "a library file holds several tasks: choose one with --task (a, b)" in done.stderr
