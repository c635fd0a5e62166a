"""The cost budget at its edges: a call that fits the budget exactly runs, a cent more does not;
cached answers and calls without usage cost nothing; the messages say what was spent (the mutants
of taskdsl.evaluator.cost that the other tests let live, see docs/security.md "Mutation testing")."""

import pytest

from loopback_openai import loopback  # noqa: F401 (the fixture)

from taskdsl.evaluator import cost
from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT
from taskdsl.evaluator.plan import prepare
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import prepare_file
from taskdsl.language.models import price_of

HOW = "raise --max-cost (or max_cost in the [run] table of taskdsl.toml)"


def test_a_prompt_is_counted_at_four_characters_a_token_rounded_up():
    assert [cost.prompt_tokens("x" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_the_estimate_prices_each_call_with_a_500_token_answer():
    assert cost.estimate([("gpt-4o", "x" * 4000), ("gpt-4o", "y" * 8)]) == pytest.approx(
        1000 * 2.5e-06 + 500 * 1e-05 + 2 * 2.5e-06 + 500 * 1e-05)
    assert cost.estimate([("openai/my-local-model", "x" * 4000)]) == 0.0  # not priced: nothing here


def test_a_call_whose_prompt_fits_the_budget_exactly_runs():
    prompt = "y" * 4000  # 1,000 tokens: $0.0025 for gpt-4o
    budget = cost.Budget(price_of("gpt-4o", 1000, 0))
    budget.before("gpt-4o", prompt)  # exactly the limit: allowed
    budget = cost.Budget(0.0025, spent=0.0000001)
    with pytest.raises(TaskError) as info:
        budget.before("gpt-4o", prompt)
    assert (info.value.type, info.value.reason, info.value.message) == (
        "RESOURCE_EXHAUSTION", "cost",
        f"a call to 'gpt-4o' would take the run's cost past $0.0025 (spent $0.0000, this prompt $0.0025): {HOW}")
    assert info.value.details == {"resource": "cost", "metrics": {"spent": 0.0, "limit": 0.0025}}


def test_what_a_call_used_is_charged_and_the_run_stops_past_the_limit():
    budget = cost.Budget(0.01)
    budget.charge("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 500})  # $0.0025 + $0.005
    assert budget.spent == pytest.approx(0.0075)
    budget.charge("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 500, "cached": True})  # free
    budget.charge("gpt-4o", {"prompt_tokens": None, "completion_tokens": None})  # nothing reported: nothing
    budget.charge("gpt-4o", {})
    assert budget.spent == pytest.approx(0.0075)
    budget.charge("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 0})  # $0.01: exactly the limit
    assert budget.spent == pytest.approx(0.01)
    with pytest.raises(TaskError) as info:
        budget.charge("gpt-4o", {"prompt_tokens": "4", "completion_tokens": 1})
    assert info.value.message == f"the run has spent $0.0100, over its budget of $0.01: {HOW}"
    assert info.value.details == {"resource": "cost", "metrics": {"spent": 0.01002, "limit": 0.01}}


def test_the_estimate_counts_each_atomic_task_once_with_its_own_model(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    path = tmp_path / "p.task.xml"
    path.write_text("""<task type="sequential" name="p">
  <steps>
    <task><description>First</description><model>gpt-4o</model></task>
    <task><system>Be brief.</system><instructions>Second</instructions><description>unused</description></task>
  </steps>
</task>
""", encoding="utf-8")
    prepared = prepare(None, str(path), None, {})
    assert cost.plan_calls(prepared.node, prepared.library, "gpt-4o-mini", None) == [
        ("gpt-4o", BASE_SYSTEM_PROMPT + "First"), ("gpt-4o-mini", BASE_SYSTEM_PROMPT + "Be brief.Second")]
    assert [m for m, _ in cost.plan_calls(prepared.node, prepared.library, "gpt-4o-mini", "o1")] == ["o1", "o1"]
    expected = cost.estimate(cost.plan_calls(prepared.node, prepared.library, "gpt-4o-mini", None))
    assert cost.check_estimate(prepared.node, prepared.library, "gpt-4o-mini", None, expected) == expected
    with pytest.raises(TaskError) as info:
        cost.check_estimate(prepared.node, prepared.library, "gpt-4o-mini", None, 0.001)
    assert info.value.message == (f"the run is estimated to cost at least ${expected:.4f}, over its budget of "
                                  f"$0.001: {HOW}")
    assert info.value.details == {"resource": "cost", "metrics": {"spent": 0.0, "limit": 0.001,
                                                                  "estimated": round(expected, 6)}}


PRICED_STEPS = """<task type="sequential" name="p">
  <steps>
    <task><description>One</description></task>
    <task><description>Two</description></task>
    <task><description>Three</description></task>
  </steps>
</task>
"""


async def test_max_cost_stops_a_run_whose_calls_use_more_than_estimated(tmp_path, loopback):
    """The estimate (a 500-token answer each, $0.015 for three) fits the $0.02 budget; the answers
    really take 1,500 tokens, so the run stops after the call that passed the budget."""
    import json

    from evaluator_helpers import taskdsl_async

    fake = await loopback(usage=(1000, 1500))  # answers of 1,500 tokens: $0.015 each at gpt-4o's prices
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "p.task.xml").write_text(PRICED_STEPS, encoding="utf-8")
    code, out, err = await taskdsl_async(tmp_path, "run", "p.task.xml", "--model", "openai/gpt-4o",
                                         "--max-cost", "0.02", "--json")
    assert code == 1 and fake.count() == 2
    error = json.loads(out)["error"]
    # the second step stopped the run (the sequential reports which); the third was never called
    assert (error["type"], error["details"]["step"]) == ("TASK_FAILURE", 2)
    stopped = error["details"]["error"]
    # 1,000 prompt tokens and 1,500 answer tokens (as the model reported them), twice
    assert (stopped["type"], stopped["reason"], stopped["details"]) == (
        "RESOURCE_EXHAUSTION", "cost", {"resource": "cost", "metrics": {"spent": 0.035, "limit": 0.02}})
    assert stopped["message"] == f"the run has spent $0.0350, over its budget of $0.02: {HOW}"
    assert "step 2 of 3 failed: RESOURCE_EXHAUSTION (cost)" in err


def test_spending_is_reported_to_the_millionth_of_a_dollar():
    with pytest.raises(TaskError) as info:
        cost.Budget(0.000001).charge("gpt-4o", {"prompt_tokens": 1})  # $0.0000025
    assert info.value.details["metrics"] == {"spent": 0.000003, "limit": 0.000001}


def test_the_estimate_follows_calls_into_the_library(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text("""<library>
  <template name="ask" params="x">
    <task><description>Ask about {{x}}</description><model>gpt-4o</model></task>
  </template>
</library>
""", encoding="utf-8")
    entry = tmp_path / "main.task.xml"
    entry.write_text('<call template="ask"><arg>rain</arg></call>\n', encoding="utf-8")
    prepared = prepare_file(str(entry), None, {})
    calls = cost.plan_calls(prepared.node, prepared.library, "gpt-4o-mini", None)
    assert [model for model, _ in calls] == ["gpt-4o"]
    expected = cost.estimate(calls)
    assert expected == pytest.approx(price_of("gpt-4o", cost.prompt_tokens(calls[0][1]), 500)) and expected > 0.005
    with pytest.raises(TaskError) as info:
        cost.check_estimate(prepared.node, prepared.library, "gpt-4o-mini", None, 0.001)
    assert info.value.details["metrics"]["estimated"] == round(expected, 6)
