"""Limits of a run: captured output capped per step, a total timeout, a cost budget estimated
before the run and enforced while it runs."""

import json

import pytest

from evaluator_helpers import write
from taskdsl.evaluator import cost
from taskdsl.evaluator.script import OUTPUT_CAP
from taskdsl.cli.run import main

CAP_MB = OUTPUT_CAP // (1024 * 1024)


def run(argv, capsys):
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_script_output_is_capped_and_the_cap_noted(tmp_path, capsys):
    path = write(tmp_path, "t.task.xml", f"""
        <task type="script" name="loud">
          <command>head -c {OUTPUT_CAP + 100} /dev/zero | tr '\\0' a; head -c {OUTPUT_CAP + 7} /dev/zero 1&gt;&amp;2</command>
        </task>""")
    code, out, err = run([path, "--json", "-q"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert len(result["content"]) == OUTPUT_CAP and CAP_MB == 10
    assert result["notes"]["output_capped"] == {"limit_bytes": OUTPUT_CAP, "stdout_dropped_bytes": 100,
                                                "stderr_dropped_bytes": 7}


def test_the_whole_run_has_a_time_limit(tmp_path, capsys):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="slow"><description>d</description><steps>
          <task type="script"><command>sleep 0.2</command></task>
          <task type="script"><command>sleep 30</command></task>
        </steps></task>""")
    code, out, err = run([path, "--timeout", "1", "--json"], capsys)
    assert code == 1
    error = json.loads(out)["error"]
    assert (error["type"], error["reason"], error["details"]) == (
        "RESOURCE_EXHAUSTION", "timeout", {"resource": "time", "metrics": {"limit": 1.0}})
    assert "allow more with --timeout SECONDS" in err


PRICED = """<task type="sequential" name="priced"><description>d</description><steps>
  <task><instructions>{text}</instructions></task>
  <task><instructions>again: {{{{last_output}}}}</instructions></task>
</steps></task>"""


def test_an_estimate_over_the_budget_refuses_before_anything_runs(tmp_path, capsys):
    from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT
    from taskdsl.language.models import prices

    marker = tmp_path / "ran"
    path = write(tmp_path, "t.task.xml", PRICED.format(text="x" * 4000).replace(
        "<steps>", f'<steps><task type="script"><command>touch {marker}</command></task>'))
    code, out, err = run([path, "--model", "gpt-4o", "--max-cost", "0.001", "--json", "-q"], capsys)
    assert code == 1 and not marker.exists()
    error = json.loads(out)["error"]
    assert (error["type"], error["reason"], error["details"]["resource"]) == ("RESOURCE_EXHAUSTION", "cost", "cost")
    # each atomic task once: its prompt's own text at 4 characters a token, and a 500-token answer
    cost_in, cost_out = prices("gpt-4o")
    prompts = [BASE_SYSTEM_PROMPT + "x" * 4000, BASE_SYSTEM_PROMPT + "again: {{last_output}}"]
    expected = sum(-(-len(p) // 4) * cost_in + 500 * cost_out for p in prompts)
    assert error["details"]["metrics"] == {"spent": 0.0, "limit": 0.001, "estimated": round(expected, 6)}
    assert f"the run is estimated to cost at least ${expected:.4f}, over its budget of $0.001: raise --max-cost" in err


def test_offline_models_cost_nothing(tmp_path, capsys):
    path = write(tmp_path, "t.task.xml", PRICED.format(text="x" * 4000))
    code, out, err = run([path, "--model", "taskdsl/echo", "--max-cost", "0", "-q"], capsys)
    assert code == 0, err


def test_the_budget_is_enforced_with_the_tokens_really_used():
    budget = cost.Budget(0.01)
    budget.charge("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 500})  # $0.0025 + $0.005
    assert budget.spent == pytest.approx(0.0075)
    with pytest.raises(Exception) as info:  # this prompt alone (4000 tokens, $0.01) does not fit what is left
        budget.before("gpt-4o", "y" * 16000)
    assert (info.value.type, info.value.reason, info.value.details["resource"]) == ("RESOURCE_EXHAUSTION", "cost", "cost")
    budget.before("gpt-4o", "y" * 100)
    with pytest.raises(Exception) as info:
        budget.charge("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 1000})
    assert "over its budget of $0.01: raise --max-cost" in info.value.message
