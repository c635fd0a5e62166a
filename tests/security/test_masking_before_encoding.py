"""Masking applies to each value before it is encoded: a secret holding a line break, a quote, a
backslash or a tab is masked in `taskdsl test`'s failure message (shown in repr form), its JSON
report and JUnit XML, in the notes a step passes on as JSON (and so in traces and OpenTelemetry
spans), and a secret that is a JSON key or number leaves `run --json` valid JSON. The value given
for an input named like a secret is a secret of that run. Everything through the real command line."""

import json

import pytest

from taskdsl.cli.main import main
from taskdsl.support.redaction import Redactor

PEM = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----"
QUOTED = 'hunter2"xyz\\q9'
TABBED = "ab\\cdef\tghij"

NOTES_FLOW = """<task type="sequential" name="flow">
  <context_management><accumulate_data>true</accumulate_data></context_management>
  <steps>
    <task type="script" name="connect">
      <command>printf 'conn ok %s\\n%s\\n' "$DB_PASSWORD" "$MY_API_KEY"</command>
    </task>
    <task name="say"><description>Say what the first step did</description></task>
  </steps>
</task>
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def shows(text: str, secret: str) -> list[str]:
    """The pieces of secret (8 characters or more, split at its quotes, backslashes, tabs and line
    breaks) that text still holds."""
    pieces = secret
    for c in '"\\\t\n':
        pieces = pieces.replace(c, "\0")
    return [p for p in pieces.split("\0") if len(p) >= 6 and p in text]


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    return tmp_path


def test_a_failing_test_never_shows_a_secret_with_a_line_break_a_backslash_or_a_tab(project, capsys, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", PEM)
    monkeypatch.setenv("OTHER_SECRET", TABBED)
    (project / "lib.task.xml").write_text("""<library>
  <task name="leak" type="script">
    <description>Print the keys</description>
    <command>printf '%s\\n%s\\n' "$MY_API_KEY" "$OTHER_SECRET"</command>
  </task>
</library>
""", encoding="utf-8")
    (project / "leak.test.xml").write_text(
        "<tests>\n<test name=\"leaks\" task=\"leak\"><expect test='output == \"nope\"'/></test>\n</tests>\n",
        encoding="utf-8")
    code, out, err = run(capsys, "test", "--junit", "report.xml")
    assert code == 1, out + err
    assert "FAIL leak.test.xml::leaks" in out and "does not hold; output: '***\\n***" in out
    junit = (project / "report.xml").read_text(encoding="utf-8")
    code, report, err = run(capsys, "test", "--format", "json")
    assert code == 1, err
    tests = json.loads(report)["tests"]
    assert [t["status"] for t in tests] == ["failed"]
    for text in (out, err, junit, report):
        assert shows(text, PEM) == [] and shows(text, TABBED) == []
    assert "***" in junit


def test_a_failing_test_of_a_json_output_never_shows_a_secret_escaped_twice(project, capsys, monkeypatch):
    """A parsed JSON output is shown as JSON in repr form: a line break in the secret is `\\\\n` there,
    which no masking of the text finds; the value is masked before either encoding."""
    monkeypatch.setenv("MY_API_KEY", PEM)
    (project / "lib.task.xml").write_text("""<library>
  <task name="leak" type="script">
    <description>Print the key as JSON</description>
    <command>python3 -c 'import json, os; print(json.dumps({"key": os.environ["MY_API_KEY"]}))'</command>
    <output_format type="json"/>
  </task>
</library>
""", encoding="utf-8")
    (project / "leak.test.xml").write_text(
        "<tests>\n<test name=\"leaks\" task=\"leak\"><expect test='output == \"nope\"'/></test>\n</tests>\n",
        encoding="utf-8")
    code, out, err = run(capsys, "test", "--junit", "report.xml")
    assert code == 1, out + err
    assert """output: '{"key": "***"}'""" in out
    junit = (project / "report.xml").read_text(encoding="utf-8")
    code, report, err = run(capsys, "test", "--format", "json")
    assert code == 1 and json.loads(report)["failed"] == 1, err
    for text in (out, err, junit, report):
        assert shows(text, PEM) == []


def test_a_secret_that_is_a_json_key_or_number_leaves_run_json_valid(project, capsys, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "supersecretkey")
    monkeypatch.setenv("DB_PASSWORD", "1234567890")
    (project / "j.task.xml").write_text("""<task type="script" name="j">
  <command>printf '{"%s": %s, "n": [%s]}' "$MY_TOKEN" "$DB_PASSWORD" "$DB_PASSWORD"</command>
  <output_format type="json"/>
</task>
""", encoding="utf-8")
    code, out, err = run(capsys, "run", "j.task.xml", "--json", "-q", "--trace", "t.jsonl")
    assert code == 0, err
    parsed = json.loads(out)  # valid JSON: the key and the numbers are the string "***"
    assert parsed["parsed_content"] == {"***": "***", "n": ["***"]}
    trace = (project / "t.jsonl").read_text(encoding="utf-8")
    for line in trace.splitlines():
        json.loads(line)
    for text in (out, err, trace):
        assert "supersecretkey" not in text and "1234567890" not in text


def test_the_notes_a_step_passes_on_are_masked_before_they_are_encoded(project, capsys, monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", QUOTED)
    monkeypatch.setenv("MY_API_KEY", PEM)
    (project / "flow.task.xml").write_text(NOTES_FLOW, encoding="utf-8")
    code, out, err = run(capsys, "run", "flow.task.xml", "--model", "taskdsl/echo", "--trace", "t.jsonl", "--json")
    assert code == 0, err
    json.loads(out)
    trace = (project / "t.jsonl").read_text(encoding="utf-8")
    prompts = [json.loads(line) for line in trace.splitlines()]
    assert any('[step 1] notes: {"stdout": "conn ok ***\\n***' in json.dumps(record) or
               '[step 1] notes: {"stdout": "conn ok ***' in str(record) for record in prompts), trace
    for text in (out, err, trace):
        assert shows(text, QUOTED) == [] and shows(text, PEM) == []


def test_an_input_named_like_a_secret_is_a_secret_of_a_single_run(project, capsys):
    (project / "t.task.xml").write_text("""<task type="script" name="t">
  <inputs><input name="api_token"/></inputs>
  <command>printf 'got %s\\n' "$TASKDSL_INPUT_API_TOKEN"</command>
</task>
""", encoding="utf-8")
    code, out, err = run(capsys, "run", "t.task.xml", "--input", "api_token=supersecret123", "--trace", "t.jsonl")
    assert code == 0, err
    assert out == "got ***\n"
    code, out, err = run(capsys, "run", "t.task.xml", "--input", "api_token=supersecret123", "--json")
    assert code == 0, err
    assert json.loads(out)["content"] == "got ***"
    trace = (project / "t.jsonl").read_text(encoding="utf-8")
    for text in (out, err, trace):
        assert "supersecret123" not in text


@pytest.mark.parametrize("value, secret", [(98765432101, "98765432101"), (["supersecret456"], "supersecret456"),
                                           ({"k": "supersecret789"}, "supersecret789")])
def test_an_input_named_like_a_secret_is_a_secret_whatever_its_json_type(project, capsys, value, secret):
    (project / "s.task.xml").write_text("""<task type="script" name="s">
  <inputs><input name="api_token"/></inputs>
  <command>echo "tok={{api_token}}"</command>
</task>
""", encoding="utf-8")
    (project / "in.json").write_text(json.dumps({"api_token": value}), encoding="utf-8")
    code, out, err = run(capsys, "run", "s.task.xml", "--inputs", "in.json", "--json", "--trace", "t.jsonl")
    assert code == 0, err
    json.loads(out)
    for text in (out, err, (project / "t.jsonl").read_text(encoding="utf-8")):
        assert secret not in text


def test_a_tests_input_named_like_a_secret_is_masked_in_every_report(project, capsys):
    (project / "s.task.xml").write_text("""<task type="script" name="s">
  <inputs><input name="api_token"/></inputs>
  <command>echo "tok={{api_token}}"</command>
</task>
""", encoding="utf-8")
    (project / "s.test.xml").write_text("""<tests>
  <test name="a" task="s">
    <input name="api_token">supersecret123</input>
    <expect test='"nope" in output'/>
  </test>
</tests>
""", encoding="utf-8")
    code, out, err = run(capsys, "test", "s.test.xml", "--junit", "report.xml")
    assert code == 1
    assert "output: 'tok=***'" in out
    code, json_out, _ = run(capsys, "test", "s.test.xml", "--format", "json")
    assert json.loads(json_out)["tests"][0]["output"] == "tok=***"
    for text in (out, err, json_out, (project / "report.xml").read_text(encoding="utf-8")):
        assert "supersecret123" not in text


def test_masking_a_structure_masks_keys_and_numbers_and_encodes_after():
    redactor = Redactor(["1234567890", "supersecretkey", PEM])
    value = {"supersecretkey": 1234567890, "n": [1234567890, 12345.5, True, None, "x supersecretkey"],
             7: {1234567890: PEM}}
    masked = {"***": "***", "n": ["***", 12345.5, True, None, "x ***"], 7: {"***": "***"}}
    assert redactor.mask(value) == masked
    assert json.loads(redactor.json(value)) == {"***": "***", "n": ["***", 12345.5, True, None, "x ***"],
                                                "7": {"***": "***"}}
    # a doubly escaped secret (JSON shown in repr form) is masked: the value is masked first
    assert redactor.repr(json.dumps({"k": PEM})) == repr(json.dumps({"k": "***"}))
    assert Redactor([PEM]).text(repr(json.dumps({"k": PEM}))) != repr(json.dumps({"k": "***"}))



def test_the_json_escaped_and_python_quoted_forms_are_masked_in_text_as_a_second_net():
    redactor = Redactor([QUOTED, PEM, TABBED])
    for secret in (QUOTED, PEM, TABBED):
        for encoded in (json.dumps(secret), json.dumps(secret, ensure_ascii=False), repr(secret)):
            assert redactor.text(f"x {encoded} y") == f"x {encoded[0]}***{encoded[-1]} y"


def test_an_input_shorter_than_eight_characters_is_not_a_secret(project, capsys):
    (project / "t.task.xml").write_text("""<task type="script" name="t">
  <inputs><input name="api_token"/></inputs>
  <command>printf 'got %s\\n' "$TASKDSL_INPUT_API_TOKEN"</command>
</task>
""", encoding="utf-8")
    assert run(capsys, "run", "t.task.xml", "--input", "api_token=short12")[:2] == (0, "got short12\n")
