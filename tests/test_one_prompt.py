"""One prompt builder (SPEC §17): `taskdsl render` prints the messages the run sends, byte for
byte (compared with what a loopback OpenAI-compatible server receives); an input the prompt already
holds through {{…}} — a variable or an inline call's argument — is not appended again; a reduce
does not append its item to its parts' prompts again and again."""

import json

from evaluator_helpers import taskdsl_async, write
from taskdsl.cli.main import main
from test_evaluator_models import openai_server  # noqa: F401 (the loopback OpenAI-compatible server)

LIB = """<template name="wrap" params="text">
  <task type="script"><description>wrap</description><command>printf '[%s]' {{text}}</command></task>
</template>"""
ATOMIC = """<task name="judge">
  <system>You are strict.</system>
  <instructions>Judge {{wrap(thing)}} for {{audience}}</instructions>
  <inputs><input name="thing">the draft</input><input name="audience">readers</input><input name="extra">more</input></inputs>
</task>"""


async def test_render_prints_the_messages_the_run_sends(tmp_path, openai_server, capsys):
    (tmp_path / "taskdsl.toml").write_text("")
    write(tmp_path, "lib.task.xml", LIB)
    write(tmp_path, "judge.task.xml", ATOMIC.replace("{{wrap(thing)}}", "{{thing}}"))
    code, out, err = await taskdsl_async(tmp_path, "render", "judge.task.xml", "--model", "openai/local-model",
                                         "--json")
    assert code == 0, err
    [shown] = json.loads(out)
    fake = await openai_server(answers=["fine"])
    code, out, err = await taskdsl_async(tmp_path, "run", "judge.task.xml", "--model", "openai/local-model", "-q")
    assert (code, out) == (0, "fine\n"), err
    [request] = fake.requests
    assert request["body"]["messages"] == [{"role": "system", "content": shown["system"]},
                                           {"role": "user", "content": shown["user"]}]
    # the quoted inputs are in the prompt: not appended again; 'extra' is not mentioned: appended
    assert shown["user"] == 'Judge the draft for readers\n\n<input name="extra">\nmore\n</input>'


def test_the_run_appends_neither_an_inline_calls_argument_nor_a_reduce_item_again(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    write(tmp_path, "lib.task.xml", LIB)
    write(tmp_path, "log.task.xml", """
        <task type="reduce" name="log">
          <description>changelog</description>
          <initial_value>start</initial_value>
          <inputs><input name="one">fixed a bug</input><input name="two">added a flag</input></inputs>
          <inner_task><instructions>Rewrite as one changelog line: {{current_data}}</instructions>
            <inputs><input name="current_data"/></inputs></inner_task>
          <reduction_task type="script"><description>fold</description>
            <command>printf '%s | %s' {{accumulator}} {{current_result}}</command>
            <inputs><input name="current_result"/><input name="accumulator"/></inputs></reduction_task>
        </task>""")
    assert main(["run", "log.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    assert capsys.readouterr().out == ("start | Rewrite as one changelog line: fixed a bug | "
                                       "Rewrite as one changelog line: added a flag\n")
    write(tmp_path, "judge.task.xml", ATOMIC)
    assert main(["run", "judge.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    assert capsys.readouterr().out == 'Judge [the draft] for readers\n\n<input name="extra">\nmore\n</input>\n'


def test_render_exits_1_naming_each_missing_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    write(tmp_path, "t.task.xml", '<template name="t" params="audience, tone, sep"><task>'
                                  '<description>Write for {{audience}} in {{tone}}{{sep}}</description>'
                                  '<inputs><input name="sep">.</input></inputs></task></template>')
    assert main(["render", "t.task.xml"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == ("taskdsl render: 't' needs the inputs 'audience', 'tone': pass --input audience=… "
                                 "--input tone=… (or --inputs FILE.json)\n")
    assert main(["render", "t.task.xml", "--input", "audience=kids", "--input", "tone=verse"]) == 0
    assert "Write for kids in verse." in capsys.readouterr().out


def test_the_input_render_asks_for_is_one_the_run_accepts(tmp_path, capsys, monkeypatch):
    """A root's `from="user_query"` takes user_query from the run: render asked for --input
    user_query=… and the run then refused it as an unknown input (found by test_render_is_the_run
    over the corpus, 083)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    write(tmp_path, "t.task.xml", '<task><description>Sort by the requirements</description>'
                                  '<inputs><input name="requirements" from="user_query"/></inputs></task>')
    assert main(["render", "t.task.xml"]) == 1
    assert capsys.readouterr().err == ("taskdsl render: 't' needs the input 'user_query': pass --input user_query=… "
                                       "(or --inputs FILE.json)\n")
    assert main(["render", "t.task.xml", "--input", "user_query=stable"]) == 0
    assert capsys.readouterr().out.endswith('--- user\nSort by the requirements\n\n<input name="requirements">\nstable\n'
                                            '</input>\n')
    assert main(["run", "t.task.xml", "-q", "--model", "taskdsl/echo", "--input", "user_query=stable"]) == 0
    assert capsys.readouterr().out == 'Sort by the requirements\n\n<input name="requirements">\nstable\n</input>\n'


def test_a_run_state_is_made_in_one_place():
    """A run, a dry run (render, the preview) and the memory's model matcher get their RunState
    from runner.run_state alone: no module of the package calls RunState(…) anywhere else, so none
    can leave out what a run reads with (the read budget, allow_read, the memory, the redactor)."""
    import ast
    from pathlib import Path

    import taskdsl

    package = Path(taskdsl.__file__).parent
    makers = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "RunState":
                        makers.append(f"{path.relative_to(package)}:{function.name}")
    assert makers == ["evaluator/runner.py:run_state"]


def test_a_value_that_looks_like_a_placeholder_is_plain_text_to_a_run(tmp_path, capsys, monkeypatch):
    """Only a dry run reads `{{run: …}}` as a placeholder: an input holding one is sent as it is
    (not glued to the prompt before it), and a field of it is refused as of any text."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    write(tmp_path, "s.task.xml", '<task name="s"><description>Go</description><system>{{x}}</system>'
                                  '<inputs><input name="x"/></inputs></task>')
    trace = tmp_path / "trace.jsonl"
    assert main(["run", "s.task.xml", "-q", "--model", "taskdsl/echo", "--input", "x={{run: a, if any}}",
                 "--trace", str(trace)]) == 0
    [sent] = [json.loads(line)["prompt"] for line in trace.read_text().splitlines() if '"model_call"' in line]
    assert sent["system"] == ("You carry out one task of a larger workflow. Answer with the task's output only.\n\n"
                              "{{run: a, if any}}")
    write(tmp_path, "f.task.xml", '<task name="f"><description>Go {{x.field}}</description>'
                                  '<inputs><input name="x"/></inputs></task>')
    assert main(["run", "f.task.xml", "-q", "--model", "taskdsl/echo", "--input", "x={{run: a}}"]) == 1
    assert "'x' is text, not JSON: it has no member 'field' (in {{x.field}})" in capsys.readouterr().err
