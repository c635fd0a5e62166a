"""The evaluator's one debugging hook, RunState.on_step: awaited before and after each task, ref,
call and cond, in run order, with the scope and (for an atomic task) the prompt about to be sent;
a run with no hook is the same run."""

from __future__ import annotations

import asyncio

from taskdsl.evaluator.runner import execute, prepare_file

PIPELINE = """<task name="pipeline" type="sequential">
  <inputs><input name="word">hi</input></inputs>
  <steps>
    <task>
      <description>{"n": 3}</description>
      <output_format type="json"/>
    </task>
    <cond>
      <case test="output.n > 2"><task ref="shout"><inputs><input name="text" from="word"/></inputs></task></case>
    </cond>
  </steps>
</task>
"""
LIB = """<template name="shout" params="text"><task><description>{{text}}!</description></task></template>
"""


def test_on_step_sees_every_node_before_and_after_in_run_order(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text(LIB, encoding="utf-8")
    main = tmp_path / "pipeline.task.xml"
    main.write_text(PIPELINE, encoding="utf-8")
    seen = []

    async def on_step(phase, node, scope, ctx, detail):
        kind = "ref" if hasattr(node, "func_name") else "cond" if hasattr(node, "cases") else node.kind
        entry = (phase, kind, ctx.path)
        if phase == "before" and "prompt" in detail:
            entry += (detail["prompt"]["user"], detail["model"])
        if phase == "before" and kind == "atomic" and ctx.path.endswith("steps[1]"):
            assert scope.lookup("word") == "hi"
        if phase == "after":
            entry += (detail["result"].content,)
        seen.append(entry)

    prepared = prepare_file(str(main))
    result = asyncio.run(execute(prepared, model="taskdsl/echo", on_step=on_step))
    assert result.content == "hi!"
    assert seen == [
        ("before", "sequential", "pipeline"),
        ("before", "atomic", "pipeline/steps[1]", '{"n": 3}', "taskdsl/echo"),
        ("after", "atomic", "pipeline/steps[1]", '{"n": 3}'),
        ("before", "cond", "pipeline/steps[2]"),
        ("before", "ref", "pipeline/steps[2]/case[1]"),
        ("before", "atomic", "pipeline/steps[2]/case[1]/call:shout", "hi!", "taskdsl/echo"),
        ("after", "atomic", "pipeline/steps[2]/case[1]/call:shout", "hi!"),
        ("after", "ref", "pipeline/steps[2]/case[1]", "hi!"),
        ("after", "cond", "pipeline/steps[2]", "hi!"),
        ("after", "sequential", "pipeline", "hi!"),
    ]
    # the same run without the hook
    assert asyncio.run(execute(prepare_file(str(main)), model="taskdsl/echo")).content == "hi!"
