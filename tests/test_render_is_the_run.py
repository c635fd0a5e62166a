"""Render is the run (SPEC §17, one prompt builder): for every bundled example and every template of
the shared corpus that checks clean, `taskdsl render --json` is compared with what a loopback
OpenAI-compatible server receives when the same entry really runs (`taskdsl run` with a litellm
model pointed at the server).

What is asserted, for each case:
- the server received exactly the prompts the run's trace records (path by path);
- every prompt the run sent is one render printed at the same step path, byte for byte, where each
  `{{run: …}}` placeholder stands for exactly one text (the same text wherever it recurs), and a
  placeholder naming "the output of P" stands for the run's output of P (its text, or the JSON of
  its parsed value, as the run puts a value in a prompt);
- every prompt render printed was sent, except those under a `<cond>` case the run did not take;
- when render refuses (exit 1), the run refuses with the same sentence before sending anything.

Why running the scripts is harmless: each case runs in a copy of its files in a temporary folder
(the copy is the project; scripts run there), and every command the cases reach is in HARMLESS
below (reading and printing only): a new example or corpus template with another command fails
`test_every_command_the_cases_reach_is_read_and_judged_harmless` until someone reads it and adds it.
"""

import asyncio
import contextlib
import json
import shutil
import tempfile
import threading
from pathlib import Path

import pytest
from aiohttp import web

from paths import CORPUS, REPO, corpus_files
from prompt_match import assert_stands_for, untaken
from taskdsl.cli.main import main
from taskdsl.evaluator.plan import prepare
from taskdsl.evaluator.runner import project_index
from test_evaluator_models import SECRET

MODEL = "openai/local-model"

#: every shell command the cases reach (their plans' commands), read and judged: each only reads
#: files of the copied project or prints
HARMLESS = {
    "cat data/changes.json",
    'echo "minor release: no breaking changes"',
    "printf '%s' \"$TASKDSL_INPUT_CURRENT_DATA\" | wc -w",
    "awk -v a=\"$TASKDSL_INPUT_ACCUMULATOR\" -v b=\"$TASKDSL_INPUT_CURRENT_RESULT\" 'BEGIN { print a + b }'",
    "printf '%s' {{text}} | tr '[:lower:]' '[:upper:]'",
    'echo "Hello, $TASKDSL_INPUT_WHO!"',
    "cat report.txt",
    'find ./src -name "*.py" | grep -v "__pycache__"',
}
#: inputs a case needs that a run cannot make up (a root <cond> tests last_output)
GIVEN = {"last_output": '{"valid": true, "errors": 0}'}


def entries_of(path: Path) -> list[str | None]:
    """The entries of a file: None (its root) or, for a <library>, each named template and task."""
    from lxml import etree

    root = etree.fromstring(path.read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
    if root.tag != "library":
        return [None]
    return [child.get("name") for child in root if child.tag in ("template", "task") and child.get("name")]


def checks_clean(path: Path) -> bool:
    """Whether the template checks clean alone in a project of its own (the run's gate: `prepare`
    refuses with the checker's errors over every file the entry reaches)."""
    from taskdsl.evaluator.plan import TemplateErrors

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        shutil.copy(path, copy)
        (Path(folder) / "taskdsl.toml").write_text("")
        try:
            prepare(project_index(str(copy)), str(copy), None, {})
        except TemplateErrors:
            return False
        except Exception:  # refused for another reason (not a task file): not a template that checks clean
            return False
    return True


EXAMPLES = sorted(p.relative_to(REPO / "examples") for p in (REPO / "examples").rglob("*.task.xml"))
CASES = [pytest.param("examples", str(rel), task, id=f"examples/{rel}" + (f":{task}" if task else ""))
         for rel in EXAMPLES for task in entries_of(REPO / "examples" / rel)]
CASES += [pytest.param("corpus", p.name, task, id=f"corpus/{p.name}" + (f":{task}" if task else ""))
          for p in corpus_files() if checks_clean(p) for task in entries_of(p)]


def copy_case(kind: str, rel: str, tmp_path: Path) -> Path:
    """The case's files in a project of their own: the examples folder, or one corpus template."""
    project = tmp_path / "project"
    if kind == "examples":
        shutil.copytree(REPO / "examples", project)
    else:
        project.mkdir()
        shutil.copy(CORPUS / rel, project / rel)
        (project / "src").mkdir()  # what the corpus's file_paths and commands name, so their runs get that far
        (project / "src" / "main.py").write_text("print('main')\n")
        (project / "src" / "utils.py").write_text("def util():\n    return 1\n")
    (project / "taskdsl.toml").write_text("")
    return project / rel


def needed_inputs(path: Path, task: str | None) -> list[str]:
    "--input arguments for what the entry needs and nobody gives (a made-up text per name)."
    prepared = prepare(project_index(str(path)), str(path), task, {})
    values = {name: GIVEN.get(name, f"the {name}") for name in prepared.missing}
    if type(prepared.node).__name__ == "Cond":
        values.setdefault("last_output", GIVEN["last_output"])
    return [f"--input={name}={value}" for name, value in values.items()]


def answer_for(system: str, user: str, number: int) -> str:
    "An answer of the shape the prompt asks for (so no answer is retried), different for each call."
    if "PROJECT MATCHER" in system:  # the memory's model matcher (regression case below): paths of its index
        return '["reports/hr.md"]'
    if "Answer with JSON only (a JSON array)" in system or "Answer with JSON only (a JSON string[])" in system:
        return json.dumps([f"item {number}"])
    if "Answer with JSON only (a JSON number)" in system:
        return str(number)
    if "Answer with JSON only (a JSON boolean)" in system:
        return "true"
    if "Answer with JSON only" in system:
        return json.dumps({"valid": True, "errors": 0, "answer": f"answer {number}"})
    if "Answer in XML" in system:
        return f"<summary>answer {number}</summary>"
    return f"answer {number}: {len(user)} characters read"


class Server:
    def __init__(self):
        self.received: list[tuple[str, str]] = []

    async def handle(self, request):
        body = await request.json()
        messages = body["messages"]
        assert [m["role"] for m in messages] == ["system", "user"], messages  # no retry: each answer fits
        system, user = messages[0]["content"], messages[1]["content"]
        self.received.append((system, user))
        answer = answer_for(system, user, len(self.received))
        return web.json_response({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


@contextlib.contextmanager
def serving(server: Server, monkeypatch):
    """The loopback server on 127.0.0.1 in a thread of its own (the command line runs in this
    thread, as a user's does), litellm's OpenAI provider pointed at it; stopped on leaving."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder = {}

    async def start():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", server.handle)
        holder["runner"] = runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["port"] = site._server.sockets[0].getsockname()[1]

    def serve():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait()
    monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{holder['port']}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    try:
        yield
    finally:
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


def render_then_run(path: Path, args: list[str], tmp_path: Path, monkeypatch, capsys) -> dict:
    """`taskdsl render --json` and `taskdsl run` of the same entry against the loopback server,
    and every assertion of this module's docstring. Returns what was shown and sent."""
    monkeypatch.setenv("TASKDSL_CACHE_DIR", str(tmp_path / "cache-home"))
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    monkeypatch.chdir(path.parent)
    server = Server()
    with serving(server, monkeypatch):
        rendered = main(["render", str(path), *args, "--model", MODEL, "--json"])
        shown, render_err = capsys.readouterr()
        trace = tmp_path / "trace.jsonl"
        ran = main(["run", str(path), *args, "--model", MODEL, "-q", "--no-cache", "--trace", str(trace)])
        _, run_err = capsys.readouterr()
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    calls = [e for e in events if e["event"] == "model_call"]
    # what the trace says was sent is what the server received
    assert sorted(server.received) == sorted((c["prompt"]["system"], c["prompt"]["user"]) for c in calls)
    summary = {"rendered": rendered, "ran": ran, "render_err": render_err, "run_err": run_err, "calls": calls}
    if rendered != 0:  # render refuses only where the run refuses, with the same words, before any call
        assert rendered == 1 and ran == 1 and server.received == [], (render_err, run_err)
        reason = render_err.removeprefix("taskdsl render: cannot build the prompt: ").strip()
        assert reason and reason in run_err, (render_err, run_err)
        return summary
    shown = json.loads(shown)
    previews = {p["task"]: p for p in shown}
    assert len(previews) == len(shown), [p["task"] for p in shown]  # one prompt per step path
    outputs = {e["path"]: e["output"] for e in events if e["event"] == "end" and isinstance(e.get("output"), str)}
    run_paths = {e["path"] for e in events if "path" in e}
    for call in calls:
        assert call["path"] in previews, f"the run sent a prompt at {call['path']}; render printed {sorted(previews)}"
        preview = previews[call["path"]]
        assert preview["model"] == MODEL
        for part in ("system", "user"):
            assert_stands_for(preview[part], call["prompt"][part], outputs, f"{call['path']} ({part})")
    sent_paths = {c["path"] for c in calls}
    for where in previews:
        assert where in sent_paths or untaken(where, run_paths), f"render printed {where}; the run never sent it"
    return {**summary, "previews": previews}


@pytest.mark.parametrize(("kind", "rel", "task"), CASES)
def test_render_prints_what_the_run_sends(kind, rel, task, tmp_path, monkeypatch, capsys):
    path = copy_case(kind, rel, tmp_path)
    found = render_then_run(path, [*(["--task", task] if task else []), *needed_inputs(path, task)],
                            tmp_path, monkeypatch, capsys)
    if found["ran"] != 0 and found["rendered"] == 0:  # a clean template's run fails only where a file is missing
        assert "cannot read file_paths entry" in found["run_err"], found["run_err"]


@pytest.mark.parametrize(("kind", "rel", "task"), CASES)
def test_every_command_the_cases_reach_is_read_and_judged_harmless(kind, rel, task, tmp_path):
    path = copy_case(kind, rel, tmp_path)
    prepared = prepare(project_index(str(path)), str(path), task, {})
    assert set(prepared.commands) <= HARMLESS, set(prepared.commands) - HARMLESS


def test_the_cases_are_every_example_and_every_clean_corpus_template():
    ids = [case.id for case in CASES]
    assert "examples/release_check.task.xml" in ids and "examples/lib/text.task.xml:translate" in ids
    assert len([i for i in ids if i.startswith("corpus/")]) >= 30 or not corpus_files()


# ------------------------------------------------------------------ regression cases
# what the examples and the corpus do not reach, each once a disagreement (or a crash) of render

LIB = """<library>
  <template name="ask_about" params="text">
    <task><description>Say one thing about {{text}}</description></task>
  </template>
  <template name="shout" params="text">
    <task type="script"><description>upper</description><command>printf '%s' {{text}} | tr '[:lower:]' '[:upper:]'</command></task>
  </template>
</library>"""
FLOW = """<task type="sequential" name="flow">
  <context_management><accumulate_data>true</accumulate_data><accumulation_format>full_output</accumulation_format></context_management>
  <steps>
    <task type="script"><description>list</description><command>echo "one two"</command></task>
    <task><description>Judge {{last_output}}</description><output_format type="json"/></task>
    <task><description>Explain {{last_output.answer}}</description></task>
    <task type="sequential"><description>inner</description><steps>
        <task><description>Draft</description></task>
        <task type="script"><description>count</description><command>printf '%s' {{last_output}} | wc -c</command></task>
    </steps></task>
    <task><description>Polish {{shout(last_output)}} and {{ask_about(last_output)}}</description></task>
  </steps>
</task>"""


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "taskdsl.toml").write_text("")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_what_a_sequential_passes_on_a_field_of_an_answer_and_inline_calls(tmp_path, monkeypatch, capsys):
    """Scripts' outputs and notes, a JSON answer's field, a nested sequential ending in a script,
    inline calls of a script and of an atomic template: the run's context (full_output) around them."""
    folder = project(tmp_path, {"lib.task.xml": LIB, "flow.task.xml": FLOW})
    found = render_then_run(folder / "flow.task.xml", [], tmp_path, monkeypatch, capsys)
    assert found["ran"] == 0, found["run_err"]
    assert [c["path"] for c in found["calls"]] == ["flow/steps[2]", "flow/steps[3]", "flow/steps[4]/steps[1]",
                                                   "flow/steps[5]/call:ask_about", "flow/steps[5]"]
    last = found["previews"]["flow/steps[5]"]
    # a nested sequential that ends in a script passes on its notes as the run does (once shown as {"steps": 2})
    assert "[step 4] notes: {{run: the notes of flow/steps[4] as JSON}}\n</previous_steps>" in last["system"]
    assert last["user"] == ("Polish {{run: the output of the script flow/steps[5]/call:shout}} and "
                            "{{run: the output of flow/steps[5]/call:ask_about}}")
    assert found["previews"]["flow/steps[3]"]["user"] == (
        "Explain {{run: last_output.answer, from the output of flow/steps[2]}}")


def test_both_parts_of_a_reduce_get_the_item_and_the_accumulator_the_run_gives_them(tmp_path, monkeypatch, capsys):
    folder = project(tmp_path, {"fold.task.xml": """<task type="reduce" name="fold">
  <description>fold</description>
  <initial_value>start</initial_value>
  <inputs><input name="one">fixed a bug</input><input name="two">added a flag</input></inputs>
  <inner_task><instructions>Rewrite as one changelog line: {{current_data}}</instructions>
    <inputs><input name="current_data"/></inputs></inner_task>
  <reduction_task><instructions>Fold {{current_result}} into {{accumulator}}</instructions>
    <inputs><input name="current_result"/><input name="accumulator"/></inputs></reduction_task>
</task>"""})
    found = render_then_run(folder / "fold.task.xml", [], tmp_path, monkeypatch, capsys)
    assert found["ran"] == 0, found["run_err"]
    assert [p["user"] for p in found["previews"].values()] == [
        "Rewrite as one changelog line: fixed a bug",
        "Fold {{run: the output of fold/inner_task[1]}} into start",
        "Rewrite as one changelog line: added a flag",
        "Fold {{run: the output of fold/inner_task[2]}} into {{run: the output of fold/reduction_task[1]}}"]


def test_a_cond_on_a_run_only_output_shows_each_case_and_a_guarded_cycle_once(tmp_path, monkeypatch, capsys):
    """A <cond> testing a model's answer: render shows every case (the run takes one); a guarded
    cycle through it is shown one round (it once recursed until the call depth limit)."""
    folder = project(tmp_path, {"again.task.xml": """<library>
  <template name="again" params="topic">
    <task type="sequential">
      <description>Check {{topic}}</description>
      <steps>
        <task><description>Check {{topic}}</description><output_format type="json"/></task>
        <cond>
          <case test="output.errors > 0"><call template="again"><arg>topic</arg></call></case>
          <default><task><description>Report on {{topic}}</description></task></default>
        </cond>
      </steps>
    </task>
  </template>
</library>"""})
    found = render_then_run(folder / "again.task.xml", ["--task", "again", "--input", "topic=tea"],
                            tmp_path, monkeypatch, capsys)
    assert found["ran"] == 0, found["run_err"]
    assert list(found["previews"]) == ["again/steps[1]", "again/steps[2]/default"]
    assert [c["path"] for c in found["calls"]] == ["again/steps[1]", "again/steps[2]/default"]


def test_the_memory_model_matchers_prompt_is_shown_as_the_run_sends_it(tmp_path, monkeypatch, capsys):
    """With `matcher = "model"` the run asks the associative_matching template first: render shows
    that prompt too (it once showed only the task's), and a placeholder for the files it picks."""
    from test_memory import INDEX, OVERRIDE, TASK

    folder = project(tmp_path, {"revenue.task.xml": TASK, "matcher.task.xml": OVERRIDE.format(model=""),
                                "reports/hr.md": "Holidays\n\n25 days.\n", "reports/q3.md": "Revenue rose.\n",
                                "src/billing.py": "X = 1\n", ".taskdsl/memory.json": json.dumps(INDEX)})
    (folder / "taskdsl.toml").write_text('[memory]\nmatcher = "model"\n')
    found = render_then_run(folder / "revenue.task.xml", [], tmp_path, monkeypatch, capsys)
    assert found["ran"] == 0, found["run_err"]
    assert [c["path"] for c in found["calls"]] == ["revenue/memory", "revenue"]
    assert "PROJECT MATCHER" in found["previews"]["revenue/memory"]["system"]
    assert ("<context>\n{{run: the files the memory's model matcher chooses for revenue}}\n</context>"
            in found["previews"]["revenue"]["system"])


def test_render_reads_what_the_project_widens_only_once_agreed_as_a_run(tmp_path, monkeypatch, capsys):
    """A project's own `[run] allow_read` applies to a run only after --yes; render told the user to set the
    allow_read they already had, and had no --yes. Now it refuses as the run does, and --yes reads."""
    outside, project = tmp_path / "outside", tmp_path / "project"
    outside.mkdir()
    project.mkdir()
    (outside / "notes.txt").write_text("the notes outside\n", encoding="utf-8")
    (project / "taskdsl.toml").write_text(f'[run]\nallow_read = ["{outside}"]\n', encoding="utf-8")
    (project / "read.task.xml").write_text(f'<task name="r"><description>Summarise</description><file_paths>'
                                           f'<path>{outside}/notes.txt</path></file_paths></task>\n', encoding="utf-8")
    monkeypatch.chdir(project)
    assert main(["render", "read.task.xml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"taskdsl render: not run: the project's taskdsl.toml widens what this run may do ([run] "
                          f"allow_read {outside}); read the plan (taskdsl run --plan), then agree with --yes "
                          "(or --agree DIGEST, that plan only)")
    assert main(["render", "read.task.xml", "--yes"]) == 0
    assert "the notes outside" in capsys.readouterr().out
