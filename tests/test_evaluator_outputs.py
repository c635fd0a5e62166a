"""Reading model answers by output_format, through `taskdsl run --json` and the replay model:
XML fields and their hostile forms, JSON shapes retried then INVALID_OUTPUT, NO_PROGRESS, and
notes.dataUsage."""

import json

import pytest

from evaluator_helpers import write
from taskdsl.evaluator.outputs import MAX_XML_ANSWER
from taskdsl.cli.run import main
from test_evaluator_models import openai_server  # noqa: F401 (the loopback OpenAI-compatible server)


def run_json(tmp_path, capsys, monkeypatch, xml, answers, *extra):
    """Run the template with taskdsl/replay answering from `answers`; (exit code, parsed --json output)."""
    fixture = tmp_path / "answers.json"
    fixture.write_text(json.dumps({"answers": answers}))
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", str(fixture))
    path = write(tmp_path, "t.task.xml", xml)
    code = main(["run", path, "--json", "-q", "--model", "taskdsl/replay", *extra])
    return code, json.loads(capsys.readouterr().out)


XML_TASK = """
    <task name="review">
      <instructions>Review the text</instructions>
      <output_format type="xml"/>
    </task>"""


def run_xml(tmp_path, capsys, monkeypatch, answer):
    return run_json(tmp_path, capsys, monkeypatch, XML_TASK, [{"answer": answer}])


# ---------------------------------------------------------------- xml fields

def test_xml_answer_becomes_named_fields(tmp_path, capsys, monkeypatch):
    answer = ("Here is my review:\n```xml\n<?xml version='1.0'?>"
              "<summary>Good <b>overall</b></summary>\n<score>4</score>"
              "<issues><issue>typo</issue><issue>long</issue></issues>\n```")
    code, out = run_xml(tmp_path, capsys, monkeypatch, answer)
    assert code == 0
    # the fences are only stripped when they wrap the whole answer: here the prose stays text around the fields
    assert out["content"] == answer
    assert out["parsed_content"] is None
    assert out["notes"]["xml_error"].startswith("the answer is not well-formed XML")

    code, out = run_xml(tmp_path, capsys, monkeypatch, answer.split(":\n", 1)[1])
    assert code == 0
    assert out["parsed_content"] == {"summary": "Good overall", "score": "4",
                                     "issues": {"issue": ["typo", "long"]}}
    assert "xml_error" not in out["notes"]


def test_xml_fields_feed_later_steps_and_conds(tmp_path, capsys, monkeypatch):
    code, out = run_json(tmp_path, capsys, monkeypatch, """
        <task type="sequential" name="pipe">
          <description>pipe</description>
          <steps>
            <task><instructions>Judge it</instructions><output_format type="xml"/></task>
            <cond>
              <case test="output.verdict == 'ok'">
                <task type="script"><command>echo "verdict {{last_output.verdict}}, {{last_output.reason}}"</command></task>
              </case>
            </cond>
          </steps>
        </task>""", [{"answer": "<verdict>ok</verdict><reason>short &amp; clear</reason>"}])
    assert code == 0
    assert out["content"] == "verdict ok, short & clear"


def test_broken_xml_degrades_to_text_with_a_note(tmp_path, capsys, monkeypatch):
    code, out = run_xml(tmp_path, capsys, monkeypatch, "<summary>unclosed <b>bold</summary>")
    assert code == 0
    assert out["content"] == "<summary>unclosed <b>bold</summary>"
    assert out["parsed_content"] is None
    assert out["notes"]["xml_error"] == ("the answer is not well-formed XML (Opening and ending tag mismatch: "
                                         "b line 1 and summary); its whole text is the output")
    assert [step["status"] for step in out["steps"]] == ["DEGRADED"]  # shown as ⚠, never as ✓


def test_answer_without_elements_degrades_with_a_note(tmp_path, capsys, monkeypatch):
    code, out = run_xml(tmp_path, capsys, monkeypatch, "Just prose, no markup.")
    assert (code, out["content"], out["parsed_content"]) == (0, "Just prose, no markup.", None)
    assert out["notes"]["xml_error"] == "the answer holds no XML elements; its whole text is the output"


# ---------------------------------------------------------------- hostile xml answers

def assert_xml_parse_error(code, out, reason, message_start):
    assert code == 1
    error = out["error"]
    assert (error["type"], error["reason"]) == ("XML_PARSE_ERROR", reason)
    assert error["message"].startswith(message_start), error["message"]


def test_external_entity_is_refused_and_the_file_never_read(tmp_path, capsys, monkeypatch):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    answer = (f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
              "<summary>&xxe;</summary>")
    code, out = run_xml(tmp_path, capsys, monkeypatch, answer)
    assert_xml_parse_error(code, out, "dtd", "the answer declares a DTD or an entity (<!DOCTYPE at line 1 column 1)")
    assert "TOP-SECRET-MARKER" not in json.dumps(out)
    passwd = '<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r>&xxe;</r>'
    code, out = run_xml(tmp_path, capsys, monkeypatch, passwd)
    assert_xml_parse_error(code, out, "dtd", "the answer declares a DTD or an entity")
    assert "root:" not in json.dumps(out)


def test_network_entity_is_refused(tmp_path, capsys, monkeypatch):
    answer = '<!DOCTYPE r SYSTEM "http://127.0.0.1:9/evil.dtd"><r>x</r>'
    code, out = run_xml(tmp_path, capsys, monkeypatch, answer)
    assert_xml_parse_error(code, out, "dtd", "the answer declares a DTD or an entity (<!DOCTYPE")


def test_billion_laughs_is_refused(tmp_path, capsys, monkeypatch):
    levels = ['<!ENTITY lol "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">'
                                        for i in range(1, 10)]
    answer = f"<!DOCTYPE lolz [{''.join(levels)}]><lolz>&lol9;</lolz>"
    code, out = run_xml(tmp_path, capsys, monkeypatch, answer)
    assert_xml_parse_error(code, out, "dtd", "the answer declares a DTD or an entity (<!DOCTYPE")


def test_entity_declaration_without_doctype_is_refused(tmp_path, capsys, monkeypatch):
    # not even valid XML, but an answer that tries to declare an entity is hostile, not merely broken
    code, out = run_xml(tmp_path, capsys, monkeypatch, '<a>x</a>\n  <!ENTITY e "boom"><b>&e;</b>')
    assert_xml_parse_error(code, out, "dtd", "the answer declares a DTD or an entity (<!ENTITY at line 2 column 3)")
    assert out["error"]["details"]["location"] == "line 2 column 3"


def test_undeclared_entity_is_not_expanded(tmp_path, capsys, monkeypatch):
    code, out = run_xml(tmp_path, capsys, monkeypatch, "<a>&xxe;</a>")
    assert (code, out["parsed_content"]) == (0, None)
    assert "Entity 'xxe' not defined" in out["notes"]["xml_error"]


def test_oversized_answer_is_refused(tmp_path, capsys, monkeypatch):
    answer = "<a>" + "x" * (MAX_XML_ANSWER + 1) + "</a>"  # over the answer limit, under the fixture limit
    code, out = run_xml(tmp_path, capsys, monkeypatch, answer)
    assert_xml_parse_error(code, out, "too_large", f"the answer has {len(answer):,} characters, more than the "
                                                   f"{MAX_XML_ANSWER:,} an XML answer may have")
    assert out["error"]["details"] == {"size": len(answer), "limit": MAX_XML_ANSWER}


# ---------------------------------------------------------------- json with a schema

JSON_TASK = """
    <task name="list">
      <instructions>List the files</instructions>
      <output_format type="json" schema="SHAPE"/>
    </task>"""

RETRY = "Answer the same task again"


def test_schema_mismatch_is_retried_once_with_the_reason(tmp_path, capsys, monkeypatch):
    answers = [{"contains": [RETRY, "1 is not of type 'string' (at [1])"], "answer": '["a.py", "b.py"]'},
               {"answer": '["a.py", 1]'}]
    code, out = run_json(tmp_path, capsys, monkeypatch, JSON_TASK.replace("SHAPE", "string[]"), answers)
    assert code == 0
    assert out["parsed_content"] == ["a.py", "b.py"]
    assert out["notes"]["retried"] == "output does not match schema 'string[]': 1 is not of type 'string' (at [1])"
    assert out["notes"]["dataUsage"]["model_calls"] == 2


def test_schema_mismatch_twice_is_invalid_output_with_the_validators_message(tmp_path, capsys, monkeypatch):
    answers = [{"answer": '{"files": []}'}]
    code, out = run_json(tmp_path, capsys, monkeypatch, JSON_TASK.replace("SHAPE", "array"), answers)
    assert code == 1
    error = out["error"]
    assert (error["type"], error["reason"]) == ("INVALID_OUTPUT", "schema_mismatch")
    assert error["message"] == ("the answer does not match the declared output after one retry: output does not "
                                "match schema 'array': {'files': []} is not of type 'array'")
    assert error["details"]["violations"] == ["output does not match schema 'array': {'files': []} is not of type 'array'"]
    assert error["details"]["answer"] == '{"files": []}'


def test_text_that_is_not_json_does_not_match_a_schema(tmp_path, capsys, monkeypatch):
    answers = [{"contains": RETRY, "answer": "still prose"}, {"answer": "Sure! Here it is."}]
    code, out = run_json(tmp_path, capsys, monkeypatch, JSON_TASK.replace("SHAPE", "object"), answers)
    assert (code, out["error"]["type"]) == (1, "INVALID_OUTPUT")
    assert out["error"]["message"].endswith("output is not valid JSON: Expecting value at line 1 column 1")
    assert out["error"]["details"]["answer"] == "still prose"


def test_a_boolean_is_not_a_number(tmp_path, capsys, monkeypatch):
    code, out = run_json(tmp_path, capsys, monkeypatch, JSON_TASK.replace("SHAPE", "number"), [{"answer": "true"}])
    assert out["error"]["message"].endswith("True is not of type 'number'")


def test_script_output_not_of_its_schema_is_invalid_output(tmp_path, capsys, monkeypatch):
    code, out = run_json(tmp_path, capsys, monkeypatch, """
        <task type="script" name="s"><command>echo '[1, 2]'</command>
          <output_format type="json" schema="object"/></task>""", [])
    assert code == 1
    assert (out["error"]["type"], out["error"]["message"]) == (
        "INVALID_OUTPUT", "task 's': output does not match schema 'object': [1, 2] is not of type 'object'")


# ---------------------------------------------------------------- NO_PROGRESS

REDUCE = """
    <task type="reduce" name="merge">
      <description>merge notes</description>
      <initial_value>none yet</initial_value>
      <inputs><input name="a">note A</input><input name="b">note B</input><input name="c">note C</input></inputs>
      <inner_task><instructions>Summarise {{current_data}}</instructions></inner_task>
      <reduction_task><instructions>Merge {{current_result}} into: {{accumulator}}</instructions></reduction_task>
    </task>"""


def test_reduce_whose_accumulator_stops_changing_is_no_progress(tmp_path, capsys, monkeypatch):
    answers = [{"contains": "Summarise", "answer": "a summary"},
               {"contains": "into: none yet", "answer": "merged A"},
               {"contains": "into: merged A", "answer": "merged A"}]  # the same answer, whatever comes in
    code, out = run_json(tmp_path, capsys, monkeypatch, REDUCE, answers)
    assert code == 1
    error = out["error"]
    assert (error["type"], error["reason"]) == ("NO_PROGRESS", "unchanged_accumulator")
    assert error["message"] == ("task 'merge': the reduction_task's model answered with the accumulator it was "
                                "given, unchanged, 2 times in a row (inputs 2 to 3): the reduce is making no progress; "
                                "a fold that keeps its accumulator on purpose (the largest, a filter) decides in a "
                                "script reduction_task, which this rule does not hold")
    assert (error["details"]["input_index"], error["details"]["accumulator"]) == (3, "merged A")  # 1-based
    assert error["details"]["dataUsage"]["model_calls"] == 6


def test_one_unchanged_accumulator_is_progress_enough(tmp_path, capsys, monkeypatch):
    answers = [{"contains": "Summarise", "answer": "a summary"},
               {"contains": "into: none yet", "answer": "merged A"},
               {"contains": ["into: merged A", "note B"], "answer": "merged A"},
               {"contains": "into: merged A", "answer": "merged A and C"}]
    code, out = run_json(tmp_path, capsys, monkeypatch, REDUCE, answers)
    assert (code, out["content"]) == (0, "merged A and C")
    assert out["notes"]["dataUsage"]["model_calls"] == 6


# ---------------------------------------------------------------- notes.dataUsage

def test_data_usage_of_a_sequential_sums_its_steps(tmp_path, capsys, monkeypatch):
    (tmp_path / "facts.txt").write_text("the sky is blue")
    trace = tmp_path / "trace.jsonl"
    code, out = run_json(tmp_path, capsys, monkeypatch, """
        <task type="sequential" name="pipe">
          <description>pipe</description>
          <context_management><accumulate_data>true</accumulate_data></context_management>
          <inputs><input name="topic">sky</input></inputs>
          <steps>
            <task><instructions>Facts about {{topic}}</instructions>
              <file_paths><path>facts.txt</path></file_paths></task>
            <task><instructions>Rate it</instructions><output_format type="json" schema="number"/></task>
            <task type="script"><command>echo done</command></task>
          </steps>
        </task>""", [{"contains": "Facts about sky", "answer": "blue sky facts"},
                     {"contains": RETRY, "answer": "7"},
                     {"contains": "Rate it", "answer": "seven"}], "--trace", str(trace))
    assert (code, out["content"]) == (0, "done")
    calls = [json.loads(line) for line in trace.read_text().splitlines()]
    calls = [c for c in calls if c.get("event") == "model_call"]
    usage = out["notes"]["dataUsage"]
    assert usage == {
        "inputs": ["topic"], "files": ["facts.txt"], "inherited_context": 0, "accumulated_context": 0,
        "model_calls": 3,  # the rating was asked twice: its first answer was not a number
        "prompt_tokens": sum(c["tokens"]["prompt"] for c in calls),
        "completion_tokens": sum(c["tokens"]["completion"] for c in calls),
        "cost": 0}
    assert len(calls) == 2 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


async def test_retry_and_cost_through_a_real_http_endpoint(tmp_path, openai_server):
    from evaluator_helpers import run
    from taskdsl.language.models import price_of

    fake = await openai_server(answers=["Sure, here it is", '{"title": "XML"}'])
    result, _ = await run(tmp_path, """<task name="t"><instructions>Title?</instructions>
        <output_format type="json" schema="object"/></task>""", model="gpt-4o-mini")
    assert result.parsed_content == {"title": "XML"}
    retry = fake.requests[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "Sure, here it is"
    assert retry[3]["content"].startswith("Your answer cannot be used: output is not valid JSON: Expecting value")
    usage = result.notes["dataUsage"]
    assert (usage["model_calls"], usage["completion_tokens"]) == (2, 4)  # the server said 2 tokens each time
    assert usage["prompt_tokens"] == result.notes["prompt_tokens"] > 0
    assert usage["cost"] == round(price_of("gpt-4o-mini", usage["prompt_tokens"], 4), 8) > 0
