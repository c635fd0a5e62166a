"""`taskdsl render`: the prompts a run would send, exactly, calling nothing."""

import json

from evaluator_helpers import taskdsl_async, write
from taskdsl.cli.main import main
from test_evaluator_models import openai_server  # noqa: F401 (the loopback OpenAI-compatible server)

PROMPTED = """<task name="ask">
  <description>Answer a question</description>
  <system>Be brief about {{topic}}.</system>
  <instructions>Answer: {{question}}</instructions>
  <inputs>
    <input name="question">Why is the sky blue?</input>
    <input name="topic">physics</input>
    <input name="extra">a note the prompt does not quote</input>
  </inputs>
  <output_format type="json"/>
</task>
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_preview_is_what_the_run_sends(tmp_path, capsys):
    path = write(tmp_path, "ask.task.xml", PROMPTED)
    trace = tmp_path / "trace.jsonl"
    code, _, err = run(capsys, "run", path, "--model", "taskdsl/echo", "--input", "question=Why?", "--trace", str(trace))
    assert code == 0, err
    [sent] = [json.loads(line)["prompt"] for line in trace.read_text().splitlines() if '"model_call"' in line]
    code, out, err = run(capsys, "render", path, "--input", "question=Why?", "--json")
    assert code == 0, err
    [shown] = json.loads(out)
    assert (shown["system"], shown["user"]) == (sent["system"], sent["user"])
    assert shown["user"] == 'Answer: Why?\n\n<input name="topic">\nphysics\n</input>\n<input name="extra">\na note the prompt does not quote\n</input>'
    assert shown["system"].endswith("Be brief about physics.\n\nAnswer with JSON only.")
    assert (shown["task"], shown["model"], shown["tokens"]) == ("ask", "taskdsl/echo", -(-len(sent["system"] + sent["user"]) // 4))


def test_text_output_names_each_task_and_prints_the_messages(tmp_path, capsys):
    path = write(tmp_path, "ask.task.xml", PROMPTED)
    code, out, _ = run(capsys, "render", path, "--model", "gpt-4o-mini")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("=== ask — gpt-4o-mini, about ") and "-token answer" in lines[0]
    assert lines[1] == "--- system"
    assert lines[lines.index("--- user") + 1] == "Answer: Why is the sky blue?"


def test_a_preview_calls_nothing_and_marks_what_only_a_run_knows(tmp_path, capsys):
    write(tmp_path, "lib.task.xml", """<library>
  <template name="mark" params="x"><task type="script"><command>touch ran-inline</command></task></template>
</library>""")
    path = write(tmp_path, "flow.task.xml", """<task type="sequential" name="flow">
  <steps>
    <task type="script"><command>touch ran-step</command></task>
    <task>
      <description>Review {{last_output}} and {{mark(last_output)}}</description>
      <file_paths source="command"><command>touch ran-listing; echo a.txt</command></file_paths>
      <inputs><input name="first"><task type="script"><command>touch ran-nested</command></task></input></inputs>
    </task>
  </steps>
</task>
""")
    code, out, err = run(capsys, "render", path)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow.task.xml", "lib.task.xml"]
    # each value only a run knows is a placeholder naming the step it comes from, where the run puts it
    assert out == """=== flow/steps[2] — taskdsl/echo, about 125 prompt tokens
--- system
You carry out one task of a larger workflow. Answer with the task's output only.{{run: a <context> block holding \
the files listed by the file_paths command of flow/steps[2], if any}}

<previous_steps>
[step 1] notes: {{run: the notes of the script flow/steps[1] as JSON}}
</previous_steps>
--- user
Review {{run: the output of the script flow/steps[1]}} and {{run: the output of the script flow/steps[2]/call:mark}}

<input name="first">
{{run: the output of the script flow/steps[2]/inputs/first}}
</input>
"""


def test_a_template_of_a_library_with_its_params(tmp_path, capsys):
    path = write(tmp_path, "lib.task.xml", """<library>
  <template name="translate" params="text, language">
    <task><instructions>Translate into {{language}}: {{text}}</instructions></task>
  </template>
</library>""")
    code, out, _ = run(capsys, "render", path, "--task", "translate", "--input", "text=hi", "--input", "language=French")
    assert code == 0
    assert out.splitlines()[-1] == "Translate into French: hi"


def test_a_file_read_outside_the_project_is_refused_in_a_preview_too(tmp_path, capsys):
    (tmp_path / "project" / ".git").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("PRIVATE")
    path = write(tmp_path / "project", "t.task.xml",
                 "<task><description>x</description><file_paths><path>../secret.txt</path></file_paths></task>")
    code, out, err = run(capsys, "render", path)
    assert (code, out) == (1, "")
    assert "PRIVATE" not in err and "taskdsl render: cannot build the prompt: task " in err
    code, out, _ = run(capsys, "render", path, "--allow-read", str(tmp_path))
    assert code == 0 and "PRIVATE" in out


def test_a_file_that_does_not_check_is_exit_2(tmp_path, capsys):
    path = write(tmp_path, "bad.task.xml", '<task><description>{{who}}</description><input name="who"/></task>')
    code, _, err = run(capsys, "render", path)
    assert code == 2
    assert f"taskdsl render: {path} does not check" in err


async def test_render_prints_what_the_model_server_then_receives_byte_for_byte(tmp_path, openai_server):
    """A real litellm model pointed at the loopback OpenAI-compatible server: the messages the run
    sends are, byte for byte, the system and user texts `render` printed before it."""
    fake = await openai_server(answers=('{"answer": "Rayleigh scattering"}',))
    write(tmp_path, "ask.task.xml", PROMPTED)
    code, out, err = await taskdsl_async(tmp_path, "render", "ask.task.xml", "--model", "gpt-4o-mini",
                                         "--input", "question=Why?", "--json")
    assert code == 0, err
    [shown] = json.loads(out)
    assert fake.requests == []  # a preview calls nothing
    code, out, err = await taskdsl_async(tmp_path, "run", "ask.task.xml", "--model", "gpt-4o-mini",
                                         "--input", "question=Why?", "--json")
    assert code == 0, err
    [request] = fake.requests
    assert request["body"]["messages"] == [{"role": "system", "content": shown["system"]},
                                           {"role": "user", "content": shown["user"]}]


# ---------------------------------------------------------------- docs/preview.md, claim by claim

COND = """<cond>
  <case test="output.valid == true"><task><description>Handle success</description></task></case>
  <case test="output.errors > 0"><task><description>Handle errors</description></task></case>
  <default><task><description>Handle the rest</description></task></default>
</cond>"""


def test_a_cond_on_a_value_the_preview_knows_shows_only_the_case_the_run_takes(tmp_path, capsys):
    path = write(tmp_path, "c.task.xml", COND)
    code, out, err = run(capsys, "render", path, "--input", 'last_output={"valid": false, "errors": 2}')
    assert code == 0, err
    assert [line.split(" — ")[0] for line in out.splitlines() if line.startswith("===")] == ["=== cond/case[2]"]
    code, out, err = run(capsys, "render", path, "--input", 'last_output={"valid": true}')
    assert [line.split(" — ")[0] for line in out.splitlines() if line.startswith("===")] == ["=== cond/case[1]"]


def test_a_cond_on_a_run_only_output_shows_every_case_and_the_default(tmp_path, capsys):
    path = write(tmp_path, "s.task.xml", f"""<task type="sequential" name="s"><steps>
  <task><description>Judge</description><output_format type="json"/></task>
  {COND}
</steps></task>""")
    code, out, err = run(capsys, "render", path)
    assert code == 0, err
    assert [line.split(" — ")[0] for line in out.splitlines() if line.startswith("===")] == [
        "=== s/steps[1]", "=== s/steps[2]/case[1]", "=== s/steps[2]/case[2]", "=== s/steps[2]/default"]


def test_when_render_cannot_build_a_prompt_the_run_refuses_with_the_same_sentence(tmp_path, capsys):
    (tmp_path / "project" / ".git").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("PRIVATE")
    path = write(tmp_path / "project", "t.task.xml",
                 "<task><description>x</description><file_paths><path>../secret.txt</path></file_paths></task>")
    code, _, rendered = run(capsys, "render", path)
    code_run, _, ran = run(capsys, "run", path, "-q", "--model", "taskdsl/echo")
    assert (code, code_run) == (1, 1)
    sentence = rendered.removeprefix("taskdsl render: cannot build the prompt: ").strip()
    assert sentence.startswith(f"task 't': file_paths: '{tmp_path}/project/../secret.txt' is outside the project")
    assert sentence in ran


def sent_prompts(trace) -> dict:
    return {e["path"]: e["prompt"] for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "model_call"}


def test_files_a_command_lists_are_a_placeholder_that_may_stand_for_nothing(tmp_path, capsys):
    """A block the run may leave out (files a command lists, maybe none) is a placeholder ending in
    ", if any", glued to what comes before it: it stands for the block and its separator, or nothing."""
    path = write(tmp_path, "f.task.xml", """<task name="f"><description>Review</description>
  <file_paths source="command"><command>{command}</command></file_paths></task>""".format(command="true"))
    code, out, err = run(capsys, "render", path, "--json")
    assert code == 0, err
    [shown] = json.loads(out)
    assert shown["system"] == ("You carry out one task of a larger workflow. Answer with the task's output only."
                               "{{run: a <context> block holding the files listed by the file_paths command of f, "
                               "if any}}")
    trace = tmp_path / "trace.jsonl"
    assert run(capsys, "run", path, "-q", "--model", "taskdsl/echo", "--trace", str(trace))[0] == 0
    assert sent_prompts(trace)["f"]["system"] == shown["system"].split("{{")[0]  # none listed: nothing
    (tmp_path / "a.txt").write_text("A")
    path = write(tmp_path, "f.task.xml", (tmp_path / "f.task.xml").read_text().replace("true", "echo a.txt"))
    assert run(capsys, "run", path, "-q", "--model", "taskdsl/echo", "--trace", str(trace))[0] == 0
    assert sent_prompts(trace)["f"]["system"] == (shown["system"].split("{{")[0] +  # one listed: the block
                                                  '\n\n<context>\n<file path="a.txt">\nA\n</file>\n</context>')


def test_a_note_only_an_answer_that_does_not_parse_has_is_a_placeholder_that_may_stand_for_nothing(tmp_path, capsys):
    """In an accumulating sequential, a json answer that does not parse passes on a json_error note:
    render shows where, as a placeholder the run fills, or leaves out when the answer parses."""
    path = write(tmp_path, "j.task.xml", """<task type="sequential" name="j"><steps>
  <task><description>Judge</description><output_format type="json"/></task>
  <task><description>Then</description></task>
</steps></task>""")
    code, out, err = run(capsys, "render", path, "--json")
    assert code == 0, err
    system = json.loads(out)[1]["system"]
    assert system == ("You carry out one task of a larger workflow. Answer with the task's output only.{{run: a "
                      "<previous_steps> block holding the line '[step 1] notes: …' with the json_error note of "
                      "j/steps[1], if any}}")
    trace = tmp_path / "trace.jsonl"
    assert run(capsys, "run", path, "-q", "--model", "taskdsl/echo", "--trace", str(trace))[0] == 0
    sent = sent_prompts(trace)["j/steps[2]"]["system"]
    assert sent.startswith(system.split("{{")[0] + '\n\n<previous_steps>\n[step 1] notes: {"json_error": "output is '
                                                   'not valid JSON: ')


async def test_notes_about_the_call_are_never_passed_on(tmp_path, openai_server):
    """A retried answer (the first did not fit its schema) is noted in the step's notes, and not
    passed on to the next step: render shows no <previous_steps> and the run sends none."""
    fake = await openai_server(answers=("not json", '{"ok": true}', "fine"))
    write(tmp_path, "r.task.xml", """<task type="sequential" name="r"><steps>
  <task><description>Judge</description><output_format type="json" schema="object"/></task>
  <task><description>Then</description></task>
</steps></task>""")
    code, out, err = await taskdsl_async(tmp_path, "render", "r.task.xml", "--model", "gpt-4o-mini", "--json")
    assert code == 0, err
    shown = json.loads(out)[1]
    code, out, err = await taskdsl_async(tmp_path, "run", "r.task.xml", "--model", "gpt-4o-mini", "--json")
    assert code == 0, err
    assert json.loads(out)["notes"]["steps"] == 2
    first, retry, then = fake.requests
    assert len(retry["body"]["messages"]) == 4  # the answer was retried once
    assert then["body"]["messages"] == [{"role": "system", "content": shown["system"]},
                                        {"role": "user", "content": shown["user"]}]
    assert "retried" not in shown["system"] and "<previous_steps>" not in shown["system"]
