"""`taskdsl run --plan` refuses what the run would refuse before any step: a model name no provider
knows is refused by both with the same message (the plan once printed "price unknown" and exited 0,
and the run then refused it). A plan of models litellm prices needs no litellm. Through the real CLI."""

import os
import subprocess
import sys


def taskdsl(folder, *args):
    env = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=300)


def test_a_plan_with_a_misspelt_model_is_refused_as_its_run_is(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "a.task.xml").write_text('<task name="a"><instructions>Say hi</instructions></task>\n')
    plan = taskdsl(tmp_path, "run", "a.task.xml", "--plan", "--model", "gpt-4o-mimi")
    run = taskdsl(tmp_path, "run", "a.task.xml", "--model", "gpt-4o-mimi")
    assert plan.returncode == run.returncode == 2
    refusal = plan.stderr.splitlines()[-1]
    assert refusal.startswith("taskdsl run: VALIDATION_ERROR (unknown_model): model 'gpt-4o-mimi' is not known to "
                              "litellm (did you mean 'gpt-4o-mini'")
    assert run.stderr.splitlines()[-1] == refusal
    assert plan.stdout == ""  # no plan of a run that cannot start
    known = taskdsl(tmp_path, "run", "a.task.xml", "--plan", "--model", "gpt-4o-mini")
    assert known.returncode == 0 and known.stdout.splitlines()[1] == "  call gpt-4o-mini (priced)"
    assert "loading litellm" not in known.stderr  # a priced model is a known one: no import for a plan


def test_plan_with_json_gives_the_reasons_the_text_and_the_digest_to_agree_to(tmp_path):
    import json

    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "a.task.xml").write_text('<task name="a"><instructions>Say hi</instructions></task>\n')
    text = taskdsl(tmp_path, "run", "a.task.xml", "--plan", "--model", "gpt-4o-mini")
    shown = taskdsl(tmp_path, "run", "a.task.xml", "--plan", "--json", "--model", "gpt-4o-mini")
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert answer["plan"] + "\n" == text.stdout
    assert answer["reasons"] == ["cost"]
    assert text.stdout.splitlines()[-1] == f"Plan {answer['digest']}"
