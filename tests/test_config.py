"""The project configuration as a user meets it through `taskdsl check` / `taskdsl run`:
taskdsl.toml or [tool.taskdsl], its own problems at the key as written, rule selection,
inline suppression, globals bound at run, and the CI output formats (github, junit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskdsl.project.config import load_config
from taskdsl.project.settings import Settings, overlay
from taskdsl.rules.suppression import rule_enabled
from taskdsl.project.tomlkeys import key_places

FIXTURES = Path(__file__).parent / "fixtures"

# one task with no context at all (TD302) reading a global and an undeclared name (TD402)
NO_CONTEXT = """<task>
  <description>About {{project}}: {{missing}}</description>
  <context_management>
    <inherit_context>none</inherit_context>
    <fresh_context>disabled</fresh_context>
  </context_management>
</task>
"""


def taskdsl(cwd: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKDSL_")}
    done = subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return tmp_path


# ----------------------------------------------------------------------------- where keys are written


def test_key_places_cover_headers_dotted_quoted_and_inline_keys():
    text = ('# a = 1\n'
            'files = ["a", # not = a key\n  "b"]\n'
            'doc = """x = [\n"]"""\n'
            'globals = { project = "demo", "two words" = 1 }\n'
            '[tool . taskdsl.lint]\n'
            'select = ["TD3"]  # ["TD4"]\n'
            "'per-file-ignores'.\"drafts/*\" = ['TD4']\n")
    places = key_places(text)

    def written(path, part="key"):
        span = getattr(places[path], part)
        return text[span.start:span.end]

    assert written(("files",)) == "files" and written(("files",), "value") == '["a", # not = a key\n  "b"]'
    assert written(("doc",), "value") == '"""x = [\n"]"""'
    assert written(("globals", "project")) == "project" and written(("globals", "project"), "value") == '"demo"'
    assert written(("globals", "two words")) == '"two words"'
    assert written(("tool", "taskdsl", "lint")) == "lint"
    assert written(("tool", "taskdsl", "lint", "select"), "value") == '["TD3"]'
    assert written(("tool", "taskdsl", "lint", "per-file-ignores")) == "'per-file-ignores'"
    assert written(("tool", "taskdsl", "lint", "per-file-ignores", "drafts/*")) == '"drafts/*"'
    assert ("a",) not in places  # a comment is not a key


def test_key_places_of_a_cut_text_are_the_whole_texts_up_to_the_cut():
    """A file being typed: each cut of the text finds every key the whole text has whose value is
    complete before the cut, at the same place; anything else it finds is the key being typed."""
    text = '[lint]\nselect = ["TD3", """x\n"""]\nglobals = { a = { b = "c" } }\n'
    whole = key_places(text)
    assert set(whole) == {("lint",), ("lint", "select"), ("lint", "globals"), ("lint", "globals", "a"),
                          ("lint", "globals", "a", "b")}
    for end in range(len(text) + 1):
        cut = key_places(text[:end])  # never raises: it stops early on what it does not understand
        for path, place in whole.items():
            if (place.value or place.key).end <= end:
                assert path in cut and cut[path].key == place.key, (end, path)
        for path, place in cut.items():
            if path not in whole:  # the key being typed at the cut: a prefix of the whole text's key
                typed = text[place.key.start:place.key.end]
                assert place.key.end == end and any(text[p.key.start:p.key.end].startswith(typed)
                                                    and p.key.start == place.key.start for p in whole.values()), (end, path)


# ----------------------------------------------------------------------------- the config file's own problems


BAD_CONFIG = """files = ["**/*.task.xml"]
library_pths = ["lib"]

[lint]
select = ["TD3", "XX1"]

[run]
timeout = "10 minutes"
"""


def test_check_reports_bad_config_keys_at_the_key_as_written(tmp_path):
    project(tmp_path, {"taskdsl.toml": BAD_CONFIG, "a.task.xml": "<task>\n  <description>x</description>\n</task>\n"})
    code, out, err = taskdsl(tmp_path, "check", "a.task.xml")
    assert code == 1
    assert out.splitlines() == [
        "taskdsl.toml:2:1: error TD901 unknown key 'library_pths'; did you mean 'library_paths'?",
        "taskdsl.toml:5:18: error TD902 unknown rule selector 'XX1' in 'lint.select'; `taskdsl rules` lists the codes",
        "taskdsl.toml:8:11: error TD902 'run.timeout' must be a number greater than 0, got '10 minutes'",
    ]
    assert err.strip() == "3 errors, 0 warnings in 2 files"


def test_pyproject_tool_table_is_read_and_located(tmp_path):
    project(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.taskdsl.lint]\nignore = ["TD302"]\nselct = []\n',
                       "a.task.xml": NO_CONTEXT})
    code, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    lines = out.splitlines()
    assert lines[0] == "pyproject.toml:6:1: error TD901 unknown key 'selct' in [tool.taskdsl.lint]; did you mean 'select'?"
    assert [line.split()[2] for line in lines[1:]] == ["TD402", "TD402"]  # TD302 ignored by the config


def test_taskdsl_toml_wins_over_pyproject(tmp_path):
    project(tmp_path, {"pyproject.toml": '[tool.taskdsl.lint]\nignore = ["TD4"]\n',
                       "taskdsl.toml": '[lint]\nignore = ["TD302"]\n', "a.task.xml": NO_CONTEXT})
    _, out, _ = taskdsl(tmp_path, "check", "a.task.xml", "--format", "json")
    assert sorted({d["code"] for d in __import__("json").loads(out)}) == ["TD402"]


def test_invalid_toml_is_one_diagnostic_at_the_fault(tmp_path):
    project(tmp_path, {"taskdsl.toml": '[lint]\nselect = ["TD3"\n', "a.task.xml": NO_CONTEXT})
    code, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert out.splitlines()[0].startswith("taskdsl.toml:3:1: error TD903 not valid TOML: ")
    assert code == 1


def test_bad_global_names_and_values_are_reported_and_dropped(tmp_path):
    config = load_config(project(tmp_path, {"taskdsl.toml": 'globals = { ok = 3, "no way" = "x", deep = [1] }\n'}))
    assert [(p.code, config.text[p.span.start:p.span.end]) for p in config.problems] == [
        ("TD902", '"no way"'), ("TD902", "[1]")]
    assert config.get("globals") == {"ok": "3"}


# ----------------------------------------------------------------------------- rule selection


@pytest.mark.parametrize("select, ignore, enabled", [
    (None, (), True),
    (("TD4",), (), False),
    (("TD3",), (), True),
    (("ALL",), ("TD3",), False),
    (("TD3",), ("TD302",), False),
    (("TD302",), ("TD3",), True),  # the more specific selector wins
    (("TD302",), ("TD302",), False),  # at equal specificity ignore wins
])
def test_rule_selection_is_rulfs_specificity(select, ignore, enabled):
    assert rule_enabled("TD302", select, ignore) is enabled


def test_per_file_ignores_apply_to_matching_files_only(tmp_path):
    project(tmp_path, {"taskdsl.toml": '[lint.per-file-ignores]\n"drafts/*" = ["TD9"]\n"!drafts/*" = ["TD302"]\n',
                       "drafts/a.task.xml": NO_CONTEXT, "b.task.xml": NO_CONTEXT})
    _, out, _ = taskdsl(tmp_path, "check", ".")
    assert [" ".join(line.split()[0:3:2]) for line in out.splitlines()] == [
        "b.task.xml:2:22: TD402", "b.task.xml:2:35: TD402",
        "drafts/a.task.xml:1:2: TD302", "drafts/a.task.xml:2:22: TD402", "drafts/a.task.xml:2:35: TD402"]


def test_an_error_is_never_hidden_by_selection_or_suppression_and_says_so(tmp_path):
    """The run refuses every error the checker reports (SPEC §17): a selection or a suppression
    that hid one would make `check` pass what `run` refuses. They choose among warnings."""
    project(tmp_path, {"taskdsl.toml": '[lint]\nignore = ["TD4", "TD302"]\n', "a.task.xml": NO_CONTEXT})
    code, out, err = taskdsl(tmp_path, "check", "a.task.xml")
    note = " ([lint] selection does not hide errors: the run refuses them; fix it, or exclude the file)"
    assert (code, out.splitlines()) == (1, [
        "a.task.xml:2:22: error TD402 {{project}} names nothing visible: this task does not inherit its caller's "
        "variables (inherit_context) (visible: nothing)" + note,
        "a.task.xml:2:35: error TD402 {{missing}} names nothing visible: this task does not inherit its caller's "
        "variables (inherit_context) (visible: nothing)" + note])
    code, out, err = taskdsl(tmp_path, "run", "a.task.xml", "--model", "taskdsl/echo")
    assert code == 2 and err.splitlines()[-1] == "taskdsl run: a.task.xml does not check (2 error(s)); fix them first"


def test_globals_are_visible_names_to_the_checker(tmp_path):
    project(tmp_path, {"taskdsl.toml": 'globals = { project = "demo", missing = "" }\n', "a.task.xml": NO_CONTEXT})
    _, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert [line.split()[2] for line in out.splitlines()] == ["TD302"]


# ----------------------------------------------------------------------------- inline suppression


SUPPRESSED = """<task type="sequential">
  <steps>
    <task>
      <!-- taskdsl: ignore[TD402] -->
      <description>{{a}} {{b}}</description>
    </task>
    <task>
      <description>{{c}}</description>
    </task>
    <!-- taskdsl: ignore[TD402, TD303] -->
    <task>
      <description>{{d}}</description>
      <context_management>
        <accumulate_data>true</accumulate_data>
      </context_management>
    </task>
  </steps>
</task>
"""


def test_suppression_silences_its_codes_on_its_element_only(tmp_path):
    project(tmp_path, {"a.task.xml": SUPPRESSED})
    code, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert code == 1  # TD402 is an error: nothing supplies the name
    kept = " (a suppression comment does not hide errors: the run refuses them; fix it, or exclude the file)"
    assert out.splitlines() == [  # an error is never hidden: the suppression names it, it stays, saying why
        "a.task.xml:5:20: error TD402 {{a}} names nothing visible: nothing here declares it (visible: nothing)" + kept,
        "a.task.xml:5:26: error TD402 {{b}} names nothing visible: nothing here declares it (visible: nothing)" + kept,
        "a.task.xml:8:20: error TD402 {{c}} names nothing visible: nothing here declares it (visible: last_output)",
        "a.task.xml:10:5: warning TD904 unused suppression: TD402, TD303 are not reported on <task> here; remove them "
        "(TD402 is reported inside <description>: a suppression covers its element, not the children; "
        "put it before that element)",
        "a.task.xml:12:20: error TD402 {{d}} names nothing visible: nothing here declares it (visible: last_output)",
        "a.task.xml:14:10: warning TD303 <accumulate_data> has no effect on this atomic task: only a sequential "
        "accumulates step outputs; remove it",
    ]


def test_fix_removes_an_unused_suppression_line(tmp_path):
    text = '<task>\n  <!-- taskdsl: ignore[TD302] -->\n  <description>x</description>\n</task>\n'
    project(tmp_path, {"a.task.xml": text})
    code, out, _ = taskdsl(tmp_path, "check", "--fix", "a.task.xml")
    assert out.splitlines() == ["a.task.xml:2:3: fixed TD904 Remove the unused suppression"]
    assert (tmp_path / "a.task.xml").read_text() == '<task>\n  <description>x</description>\n</task>\n'


def test_partly_used_suppression_fix_keeps_the_used_code(tmp_path):
    text = '<task>\n  <!-- taskdsl: ignore[TD303, TD402] -->\n  <description>{{y}}</description>\n</task>\n'
    project(tmp_path, {"a.task.xml": text})
    _, out, _ = taskdsl(tmp_path, "check", "--fix", "a.task.xml")
    assert out.splitlines()[0] == "a.task.xml:2:3: fixed TD904 Remove TD303 from the suppression"
    assert (tmp_path / "a.task.xml").read_text() == text.replace("TD303, TD402", "TD402")


def test_malformed_suppression_is_reported(tmp_path):
    text = '<task>\n  <!-- taskdsl: ignore TD302 -->\n  <!-- taskdsl: ignore[TD999] -->\n  <description>x</description>\n</task>\n'
    project(tmp_path, {"a.task.xml": text})
    _, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert [line.split(" ", 3)[:3] for line in out.splitlines()] == [
        ["a.task.xml:2:3:", "warning", "TD905"], ["a.task.xml:3:3:", "warning", "TD905"]]
    assert "unknown code 'TD999'" in out


def test_a_suppression_with_an_unknown_code_keeps_its_known_codes_and_its_fix_removes_the_unknown(tmp_path):
    text = ('<task>\n  <!-- taskdsl: ignore[TD303, TD9999] -->\n  <description>x</description>\n'
            '  <!-- taskdsl: ignore[TD9999] -->\n  <instructions>y</instructions>\n</task>\n')
    project(tmp_path, {"a.task.xml": text})
    _, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert out.splitlines() == [  # the known TD303 still counts: unused, it is TD904 as in any suppression
        "a.task.xml:2:3: warning TD904 unused suppression: TD303 is not reported on <description> here; remove it",
        "a.task.xml:2:3: warning TD905 unknown code 'TD9999' in the suppression: name codes as `taskdsl rules` "
        "lists them, e.g. ignore[TD302]",
        "a.task.xml:4:3: warning TD905 unknown code 'TD9999' in the suppression: name codes as `taskdsl rules` "
        "lists them, e.g. ignore[TD302]",
    ]
    _, out, _ = taskdsl(tmp_path, "check", "--fix", "a.task.xml")
    assert (tmp_path / "a.task.xml").read_text() == (
        '<task>\n  <description>x</description>\n  <instructions>y</instructions>\n</task>\n')


def test_an_unknown_code_close_to_a_rule_is_named(tmp_path):
    text = '<task>\n  <!-- taskdsl: ignore[TD40] -->\n  <description>{{y}}</description>\n</task>\n'
    project(tmp_path, {"a.task.xml": text})
    _, out, _ = taskdsl(tmp_path, "check", "a.task.xml")
    assert "warning TD905 unknown code 'TD40' in the suppression" in out and "(did you mean TD4" in out


# ----------------------------------------------------------------------------- globals at run


def test_run_binds_config_globals_and_global_flags_override(tmp_path):
    project(tmp_path, {"taskdsl.toml": 'globals = { project = "demo", owner = "ann" }\n',
                       "g.task.xml": '<template name="g" params="">\n  <task>\n    <description>{{project}} by {{owner}}</description>\n  </task>\n</template>\n'})
    code, out, err = taskdsl(tmp_path, "run", "g.task.xml", "--model", "taskdsl/echo", "-q", "--global", "owner=bo")
    assert (code, err) == (0, "")
    assert "demo by bo" in out


def test_run_rejects_a_global_that_is_not_a_name(tmp_path):
    project(tmp_path, {"g.task.xml": NO_CONTEXT})
    code, _, err = taskdsl(tmp_path, "run", "g.task.xml", "--global", "two words=x")
    assert code == 2 and "expected NAME=VALUE" in err


# ----------------------------------------------------------------------------- editor settings over the project's


def test_editor_settings_overlay_the_project_but_not_with_their_defaults():
    project_settings = Settings(files=("t/*.xml",), globals=("project",), model="m1")
    editor = Settings().updated({"files": ["**/*.task.xml", "**/*.test.xml"], "globals": ["extra"], "model": "m2"})
    merged = overlay(project_settings, editor)
    assert merged.files == ("t/*.xml",)  # the editor's value is its default: the project's stays
    assert merged.globals == ("project", "extra")
    assert merged.model == "m2"


# ----------------------------------------------------------------------------- CI formats


GITHUB_CASE = {"a.task.xml": '<task>\n  <description>{{x}}, 100%</description>\n</task>\n',
               "b.task.xml": '<task typo="1">\n  <description>y</description>\n</task>\n'}


def test_github_format_is_exact_workflow_commands(tmp_path):
    project(tmp_path, GITHUB_CASE)
    code, out, _ = taskdsl(tmp_path, "check", ".", "--format", "github")
    assert code == 1
    assert out.splitlines() == [
        "::error file=a.task.xml,line=2,col=16,endLine=2,endColumn=21,title=TD402::"
        "{{x}} names nothing visible: nothing here declares it (visible: nothing)",
        "::error file=b.task.xml,line=1,col=7,endLine=1,endColumn=11,title=TD103::"
        "attribute 'typo' is not allowed on <task> (did you mean 'type'?); allowed: name, type, ref, subtype",
    ]


def test_github_format_escapes_properties_and_data():
    from taskdsl.cli.check import _github_escape

    assert _github_escape("a,b:c%\n", property_value=True) == "a%2Cb%3Ac%25%0A"
    assert _github_escape("a,b:c%\r\n") == "a,b:c%25%0D%0A"


def test_junit_format_is_exact_and_valid_against_the_junit_schema(tmp_path):
    import xmlschema

    project(tmp_path, {**GITHUB_CASE, "c.task.xml": "<task>\n  <description>z</description>\n</task>\n"})
    code, out, _ = taskdsl(tmp_path, "check", ".", "--format", "junit")
    assert code == 1
    assert out == """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="taskdsl check" tests="3" failures="2" errors="0">
  <testsuite name="a.task.xml" tests="1" failures="1" errors="0" skipped="0" time="0">
    <testcase name="TD402 2:16" classname="a.task.xml" time="0">
      <failure message="{{x}} names nothing visible: nothing here declares it (visible: nothing)" type="error">a.task.xml:2:16: error TD402 {{x}} names nothing visible: nothing here declares it (visible: nothing)</failure>
    </testcase>
  </testsuite>
  <testsuite name="b.task.xml" tests="1" failures="1" errors="0" skipped="0" time="0">
    <testcase name="TD103 1:7" classname="b.task.xml" time="0">
      <failure message="attribute 'typo' is not allowed on &lt;task&gt; (did you mean 'type'?); allowed: name, type, ref, subtype" type="error">b.task.xml:1:7: error TD103 attribute 'typo' is not allowed on &lt;task&gt; (did you mean 'type'?); allowed: name, type, ref, subtype</failure>
    </testcase>
  </testsuite>
  <testsuite name="c.task.xml" tests="1" failures="0" errors="0" skipped="0" time="0">
    <testcase name="taskdsl check" classname="c.task.xml" time="0" />
  </testsuite>
</testsuites>
"""
    xmlschema.XMLSchema(FIXTURES / "junit-10.xsd").validate(out)


def test_junit_schema_rejects_what_jenkins_would():
    import xmlschema

    schema = xmlschema.XMLSchema(FIXTURES / "junit-10.xsd")
    assert not schema.is_valid("<testsuites><testsuite name='x'><testcase name='t'/></testsuite></testsuites>")  # no tests=
    assert not schema.is_valid("<testsuites><testsuite name='x' tests='1'><testcase/></testsuite></testsuites>")


def test_junit_output_stays_xml_with_control_characters_in_a_path(tmp_path):
    from lxml import etree

    project(tmp_path, {"odd\x01name.task.xml": '<task typo="1">\n  <description>y</description>\n</task>\n'})
    _, out, _ = taskdsl(tmp_path, "check", ".", "--format", "junit")
    suite = etree.fromstring(out.encode("utf-8")).find("testsuite")
    assert suite.get("name") == "odd\ufffdname.task.xml"


def test_pre_commit_hook_is_declared(tmp_path):
    """The hook passes every file `taskdsl check` checks (templates, test files, the configuration),
    and only those; `taskdsl check` given what it passes checks them; the file names the page that
    describes it."""
    import re

    hooks = (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "- id: taskdsl-check\n" in hooks
    assert "entry: taskdsl check\n" in hooks
    assert "see docs/ci.md" in hooks and "pre-commit" in (Path(__file__).parents[1] / "docs" / "ci.md").read_text()
    files = re.compile(re.search(r"^  files: '(.*)'$", hooks, re.M).group(1))  # pre-commit: re.search on the path
    passed = ["a.task.xml", "sub/b.test.xml", "taskdsl.toml", "sub/taskdsl.toml", "pyproject.toml"]
    assert [name for name in passed + ["notes.md", "x.xml", "mytaskdsl.toml", "a.task.xml.bak"]
            if files.search(name)] == passed
    project(tmp_path, {"taskdsl.toml": "[run]\ntimout = 5\n", "a.task.xml": NO_CONTEXT,
                       "a.test.xml": '<tests>\n  <test name="t" task="a">\n    <expect test="len(output) > 0"/>\n'
                                     '  </test>\n</tests>\n'})
    code, out, err = taskdsl(tmp_path, "check", "a.task.xml", "a.test.xml", "taskdsl.toml")
    assert code == 1 and out.splitlines()[0].startswith("taskdsl.toml:2:1: error TD901 unknown key 'timout'"), out + err


def test_run_uses_the_project_model_unless_given_one(tmp_path):
    project(tmp_path, {"taskdsl.toml": 'model = "taskdsl/nope"\n', "a.task.xml": "<task>\n  <description>hi</description>\n</task>\n"})
    code, _, err = taskdsl(tmp_path, "run", "a.task.xml", "-q")
    # refused by the preflight, before any step (exit 2)
    assert code == 2 and "model 'taskdsl/nope' was not found: the offline models are taskdsl/echo and taskdsl/replay" in err
    code, out, _ = taskdsl(tmp_path, "run", "a.task.xml", "-q", "--model", "taskdsl/echo")
    assert code == 0 and "hi" in out


def test_deeply_nested_config_is_one_diagnostic_not_a_crash(tmp_path):
    project(tmp_path, {"taskdsl.toml": "files = " + "[" * 5000 + "]" * 5000 + "\n", "a.task.xml": NO_CONTEXT})
    code, out, err = taskdsl(tmp_path, "check", "a.task.xml")
    assert out.splitlines()[0] == ("taskdsl.toml:1:1: error TD903 the TOML nests arrays or tables too deeply to read; "
                                   "nothing in this file applies")
    assert "Traceback" not in err and code == 1
    nested = "a = " + "[" * 5000 + "]" * 5000
    assert key_places(nested) == {}  # the scanner stops instead of recursing
