"""`taskdsl match` and `taskdsl ask` through the real command line (a subprocess), with the offline
replay model or a loopback OpenAI-compatible server. Nothing here mocks litellm."""

import json
from pathlib import Path
import os
import subprocess
import sys
import textwrap

import pytest

from evaluator_helpers import taskdsl_async
from test_evaluator_models import FakeOpenAI, serve_chat_completions

LIBRARY = {
    "word_count.task.xml": """
        <task name="word_count" type="script">
          <description>Count the words of a text</description>
          <criteria>count, words, length</criteria>
          <command>printf '%s' "$TASKDSL_INPUT_TEXT" | wc -w</command>
          <inputs><input name="text">one two three</input></inputs>
        </task>""",
    "lib.task.xml": """
        <library>
          <template name="summarise" params="text">
            <task>
              <description>Summarise a text in bullet points</description>
              <instructions>Summarise in bullet points: {{text}}</instructions>
            </task>
          </template>
          <template name="translate" params="text, language">
            <task>
              <description>Translate a text into another language</description>
              <instructions>Translate into {{language}}: {{text}}</instructions>
            </task>
          </template>
          <template name="split_long_input" params="text">
            <task subtype="reparse">
              <description>Split a long text into parts when a summary runs out of context</description>
              <instructions>Split {{text}}</instructions>
            </task>
          </template>
        </library>""",
}

HAIKU_BAD = '<task name="autumn_haiku">\n  <prompt>Write a haiku about {{topic}}.</prompt>\n</task>'
HAIKU_GOOD = textwrap.dedent("""\
    ```xml
    <task name="autumn_haiku">
      <description>Write a haiku about autumn leaves</description>
      <instructions>Write a haiku (5, 7 and 5 syllables) about {{topic}}.</instructions>
      <inputs>
        <input name="topic">autumn leaves</input>
      </inputs>
    </task>
    ```""")
HAIKU = "leaves drift on cold wind"


@pytest.fixture
def library(tmp_path):
    for name, text in LIBRARY.items():
        (tmp_path / name).write_text(textwrap.dedent(text).strip() + "\n", encoding="utf-8")
    return tmp_path


def taskdsl(folder, *args, replay=None, env=None):
    environment = {**os.environ, **(env or {})}
    environment.pop("TASKDSL_MODEL", None)
    if replay is not None:
        fixture = folder / "replay.json"
        fixture.write_text(json.dumps({"answers": replay}), encoding="utf-8")
        environment["TASKDSL_REPLAY_FILE"] = str(fixture)
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=300)


# --------------------------------------------------------------------------- match


def test_match_ranks_by_description_criteria_and_instructions(library):
    done = taskdsl(library, "match", "count the words of my essay", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows[0]["name"] == "word_count"
    assert rows[0]["kind"] == "standard"
    assert rows[0]["path"] == str(library / "word_count.task.xml")
    assert rows[0]["line"] == 1
    assert all(set(row) == {"name", "score", "kind", "path", "line", "description"} for row in rows)
    assert rows[0]["description"] == "Count the words of a text"
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)


def test_match_names_the_reparse_kind_and_honours_the_limit(library):
    done = taskdsl(library, "match", "split a long text into parts", "--json", "--limit", "1")
    rows = json.loads(done.stdout)
    assert [(row["name"], row["kind"], row["line"]) for row in rows] == [("split_long_input", "reparse", 14)]


def test_match_text_output_is_one_line_each(library):
    done = taskdsl(library, "match", "translate a text into French")
    lines = done.stdout.splitlines()
    assert lines[0].split()[1:] == ["translate", "standard", "lib.task.xml:8"]
    assert float(lines[0].split()[0]) > float(lines[1].split()[0])


def test_match_with_nothing_in_common_is_an_empty_list(library):
    done = taskdsl(library, "match", "zebra giraffe", "--json")
    assert (done.returncode, json.loads(done.stdout)) == (0, [])


@pytest.mark.parametrize("args, message", [
    (["match", "   "], "the request is empty"),
    (["match", "x", "--limit", "0"], "expected a whole number of at least 1"),
    (["match", "x", "--library", "nowhere"], "--library nowhere: no such file or folder"),
])
def test_match_usage_problems(library, args, message):
    done = taskdsl(library, *args)
    assert done.returncode == 2
    assert message in done.stderr


# --------------------------------------------------------------------------- ask: a template fits


def test_a_template_named_as_the_request_wins_a_tie(tmp_path):
    """examples/: 'shout' and 'translate' score 1.00 for templates of those names and for greet_pipeline
    (whose text says both); the one named exactly as the request comes first, and ask uses it."""
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[1] / "examples", tmp_path / "examples")
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    for request in ("shout", "translate"):
        done = taskdsl(tmp_path, "match", request, "--library", "examples", "--json")
        ranked = [(m["name"], m["score"]) for m in json.loads(done.stdout)]
        assert ranked[0] == (request, 1.0) and ("greet_pipeline", 1.0) in ranked, ranked
    done = taskdsl(tmp_path, "ask", "shout", "--library", "examples", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("using template 'shout' (score 1.00)")


def test_ask_uses_the_matching_template_and_runs_it(library):
    done = taskdsl(library, "ask", "summarise a text in bullet points: {{secret}}", "--model", "taskdsl/echo")
    assert done.returncode == 0, done.stderr
    # the request fills the template's one param unchanged: its {{…}} is text, never a placeholder
    assert done.stdout == "Summarise in bullet points: summarise a text in bullet points: {{secret}}\n"
    assert "using template 'summarise'" in done.stderr


def test_ask_dry_run_prints_a_task_that_checks_and_saves_it(library):
    done = taskdsl(library, "ask", "summarise a text in bullet points", "--dry-run", "--save", "mine.task.xml", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["source"], report["match"]["name"], report["result"]) == ("library", "summarise", None)
    saved = (library / "mine.task.xml").read_text(encoding="utf-8")
    assert saved == report["xml"] and '<task ref="summarise">' in saved and 'name="mine"' in saved
    checked = taskdsl(library, "check", ".")
    assert checked.returncode == 0, checked.stdout
    rerun = taskdsl(library, "run", "mine.task.xml", "--model", "taskdsl/echo")
    assert rerun.stdout == "Summarise in bullet points: summarise a text in bullet points\n"


def test_ask_save_refuses_to_overwrite_a_file_unless_force(library):
    (library / "mine.task.xml").write_text("<task><description>mine, by hand</description></task>\n", encoding="utf-8")
    done = taskdsl(library, "ask", "summarise a text in bullet points", "--dry-run", "--save", "mine.task.xml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("taskdsl ask: --save mine.task.xml: the file exists; add --force to overwrite it, or save "
                           "under another name\n")
    assert (library / "mine.task.xml").read_text(encoding="utf-8") == "<task><description>mine, by hand</description></task>\n"
    done = taskdsl(library, "ask", "summarise a text in bullet points", "--dry-run", "--save", "mine.task.xml", "--force")
    assert done.returncode == 0, done.stderr
    assert '<task ref="summarise">' in (library / "mine.task.xml").read_text(encoding="utf-8")


def test_a_template_needing_two_params_is_not_used_blindly(library):
    # translate matches best, but its two params cannot both be the request: the model is asked
    done = taskdsl(library, "ask", "translate a text into another language", "--model", "taskdsl/replay",
                   "--dry-run", "--json",
                   replay=[{"answer": '<task name="fr"><instructions>Translate into French: bonjour</instructions></task>'}])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["source"] == "model"


# --------------------------------------------------------------------------- ask: the model writes one


def haiku_replay():
    return [{"contains": "syllables) about autumn leaves", "answer": HAIKU},  # the run of the task
            {"contains": ["Request: write a haiku about autumn leaves", "The checker found these errors"],
             "answer": HAIKU_GOOD},
            {"contains": "Request: write a haiku about autumn leaves", "answer": HAIKU_BAD}]


def test_ask_repairs_the_first_answer_saves_and_runs_the_second(library):
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay",
                   "--save", "haiku.task.xml", "--json", replay=haiku_replay())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["source"] == "model"
    first, second = report["attempts"]
    assert sorted({e["code"] for e in first["errors"]}) == ["TD101", "TD204"]
    assert second["errors"] == []
    assert report["result"]["content"] == HAIKU
    saved = (library / "haiku.task.xml").read_text(encoding="utf-8")
    assert saved.startswith('<task name="autumn_haiku">') and "```" not in saved
    assert taskdsl(library, "check", ".").returncode == 0


def test_ask_text_output_says_what_was_repaired(library):
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay", "--dry-run",
                   replay=haiku_replay())
    assert done.returncode == 0, done.stderr
    assert "answer 1: 2 checker error(s): TD101, TD204; sent back for repair" in done.stderr
    assert done.stdout == HAIKU_GOOD.split("\n", 1)[1].rsplit("\n", 1)[0] + "\n"


async def test_the_prompt_carries_grammar_rules_library_and_the_diagnostics(library, monkeypatch):
    fake = FakeOpenAI(answers=[HAIKU_BAD, HAIKU_BAD, HAIKU_BAD, HAIKU_BAD])
    runner = await serve_chat_completions(fake.handle, monkeypatch)
    try:
        code, out, err = await taskdsl_async(library, "ask", "write a haiku about autumn leaves",
                                             "--model", "openai/local-model", "--json")
    finally:
        await runner.cleanup()
    assert code == 3, err
    error = json.loads(out)["error"]
    assert (error["type"], error["reason"]) == ("VALIDATION_ERROR", "repair_failed")
    assert sorted({d["code"] for d in error["details"]["diagnostics"]}) == ["TD101", "TD204"]
    prompts = [r["body"]["messages"][1]["content"] for r in fake.requests]
    assert len(prompts) == 4  # the first answer and 3 repair rounds
    first = prompts[0]
    assert "<reduction_task" in first and 'type?="atomic|sequential|reduce|script"' in first  # from task.xsd
    assert "TD204 error:" in first  # from the rule registry
    assert "- summarise(text) [atomic] — Summarise a text in bullet points" in first  # the library
    assert "The checker found" not in first
    assert all("TD204" in p.split("The checker found these errors in it:")[1] for p in prompts[1:])


def test_repair_exhausted_is_a_validation_error_with_the_last_diagnostics(library):
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay",
                   "--save", "haiku.task.xml", replay=[{"answer": HAIKU_BAD}])
    assert done.returncode == 3
    assert "VALIDATION_ERROR (repair_failed): the model's task still has 2 checker error(s) after 3 repair rounds" in done.stderr
    assert "  line 2:4: TD101 <prompt> is not allowed in <task>" in done.stderr
    assert "  line 1:2: TD204 atomic <task> has neither <description> nor <instructions>" in done.stderr
    assert not (library / "haiku.task.xml").exists()
    # every round is said, as when the repair succeeds
    assert done.stderr.startswith("written by taskdsl/replay\n" + "".join(
        f"  answer {n}: 2 checker error(s): TD101, TD204; sent back for repair\n" for n in range(1, 4))
        + "  answer 4: 2 checker error(s): TD101, TD204; no repair rounds left\n")


def test_answers_that_are_not_xml_are_said_round_by_round(library):
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay",
                   replay=[{"answer": "Sure! Here is a haiku about autumn leaves."}])
    assert done.returncode == 3
    assert done.stderr.startswith("written by taskdsl/replay\n" + "".join(
        f"  answer {n}: 1 checker error(s): TD001; sent back for repair\n" for n in range(1, 4))
        + "  answer 4: 1 checker error(s): TD001; no repair rounds left\n")
    assert "XML_PARSE_ERROR (not_xml): the model's answer is not well-formed XML after 3 repair rounds" in done.stderr


def test_an_answer_that_is_not_xml_is_an_xml_parse_error(library):
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay", "--json",
                   replay=[{"answer": "Sure! Here is a haiku about autumn leaves."}])
    assert done.returncode == 3
    error = json.loads(done.stdout)["error"]
    assert (error["type"], error["reason"]) == ("XML_PARSE_ERROR", "not_xml")
    assert error["details"]["diagnostics"][0]["code"] == "TD001"


# --------------------------------------------------------------------------- hostile answers


@pytest.mark.parametrize("answer", [
    '<!DOCTYPE task [<!ENTITY secret SYSTEM "file://{secret}">]>\n<task name="t"><instructions>&secret;</instructions></task>',
    '<!DOCTYPE task [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">'
    '<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">]>\n'
    '<task name="t"><instructions>&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;</instructions></task>',
], ids=["external-entity", "entity-bomb"])
def test_a_dtd_in_the_answer_is_refused_unread(library, tmp_path_factory, answer):
    secret = tmp_path_factory.mktemp("secret") / "secret.txt"
    secret.write_text("TOP-SECRET-4242", encoding="utf-8")
    done = taskdsl(library, "ask", "write a haiku about autumn leaves", "--model", "taskdsl/replay",
                   "--save", "t.task.xml", "--json", replay=[{"answer": answer.replace("{secret}", str(secret))}])
    assert done.returncode == 3
    error = json.loads(done.stdout)["error"]
    assert (error["type"], error["reason"]) == ("XML_PARSE_ERROR", "dtd")
    assert error["message"].startswith("the answer declares a DTD or an entity (<!DOCTYPE at line 1 column 1)")
    assert "TOP-SECRET" not in done.stdout + done.stderr
    assert not (library / "t.task.xml").exists()


async def test_a_huge_answer_is_refused_unparsed(library, monkeypatch):
    fake = FakeOpenAI(answers=["<task name='t'><instructions>" + "x" * 50_000_000 + "</instructions></task>"])
    runner = await serve_chat_completions(fake.handle, monkeypatch)
    try:
        code, out, err = await taskdsl_async(library, "ask", "write a haiku", "--model", "openai/local-model")
    finally:
        await runner.cleanup()
    assert code == 3
    assert ("XML_PARSE_ERROR (too_large): the answer has 50,000,051 characters, more than the 200,000 a written "
            "task may have: it was not parsed; ask again, or write the task by hand") in err
    assert len(fake.requests) == 1  # no repair round for a hostile answer


# --------------------------------------------------------------------------- consent


def test_a_task_with_shell_commands_runs_only_with_allow_scripts(library):
    refused = taskdsl(library, "ask", "count the words of a text", "--model", "taskdsl/echo")
    assert refused.returncode == 4
    lines = refused.stderr.splitlines()
    assert lines[-3] == "taskdsl ask: not run: the task runs shell commands"
    assert lines[-2].startswith("  $ ") and "wc -w" in lines[-2]
    # asking again asks the model again: its next answer may be another task, so the way to run the one read is
    # to save it and run that file
    assert lines[-1] == ("to run this task and not another, save it (--save FILE), read it, then `taskdsl run FILE`; "
                         "asking again with --allow-scripts runs the model's next answer, which may be another task")
    allowed = taskdsl(library, "ask", "count the words of a text", "--model", "taskdsl/echo", "--allow-scripts")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "6"  # the request's own words: "count the words of a text"
    assert "running the task's shell commands:\n  $ " in allowed.stderr  # what ran unread is said


def test_a_task_that_runs_commands_and_reads_files_is_refused_once_for_both(notes):
    """Both are said in one refusal, the files as the plan shows them (one outside the project: the run refuses it),
    not one refusal, then another once the first option is given."""
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task type="script" name="notes_summary"><description>Count the notes</description>'
                         '<command>wc -l notes.txt</command>'
                         '<file_paths><path>notes.txt</path><path>/etc/hostname</path></file_paths></task>'}]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", replay=replay)
    assert done.returncode == 4
    assert done.stderr.splitlines()[-6:] == [
        "taskdsl ask: not run: the task runs shell commands",
        "  $ wc -l notes.txt",
        "and it reads files (and sends them to the model)",
        "  notes.txt",
        "  /etc/hostname (refused when it runs: outside the project; --allow-read lets it)",
        "to run this task and not another, save it (--save FILE), read it, then `taskdsl run FILE`; asking again with "
        "--allow-scripts --allow-reads runs the model's next answer, which may be another task"]


def test_a_saved_task_that_was_refused_is_run_from_the_file_read(library):
    refused = taskdsl(library, "ask", "count the words of a text", "--model", "taskdsl/echo", "--save", "count.task.xml")
    assert refused.returncode == 4
    assert refused.stderr.splitlines()[-1] == (
        "read count.task.xml, then run that file with `taskdsl run count.task.xml` (asking again with --allow-scripts "
        "runs the model's next answer, which may be another task)")
    assert (library / "count.task.xml").is_file()
    ran = subprocess.run([sys.executable, "-m", "taskdsl", "run", "count.task.xml", "--input",
                          "request=one two three"], cwd=library, capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout.strip()) == (0, "3"), ran.stderr


# --------------------------------------------------------------------------- re-planning a failed run

NOTES_BAD = textwrap.dedent("""\
    <task name="notes_summary">
      <description>Summarise the notes</description>
      <instructions>Summarise these notes in two bullet points.</instructions>
      <file_paths>
        <path>notes.txt</path>
      </file_paths>
    </task>""")
NOTES_GOOD = NOTES_BAD.replace("notes.txt", "notes.md")
NOTES_SUMMARY = "- the release is ready\n- version 2 ships on Friday"
REQUEST = "condense my meeting notes"  # no template of the library fits it
SCRIPT_TASK = ('<task name="notes_summary" type="script">\n  <description>Summarise the notes</description>\n'
               '  <command>touch pwned</command>\n</task>')


def replan_replay(replanned=NOTES_GOOD, first=NOTES_BAD):
    """The first task reads a file that is not there; told so, the model reads the right one."""
    return [{"contains": ["Request: condense my meeting notes", "its run failed", "notes.txt"], "answer": replanned},
            {"contains": "Request: condense my meeting notes", "answer": first},
            {"contains": "Summarise these notes in two bullet points.", "answer": NOTES_SUMMARY}]


@pytest.fixture
def notes(library):
    (library / "notes.md").write_text("Meeting on Monday: the release is ready.\nShip version 2 on Friday.\n")
    return library


def test_without_replan_a_failed_run_is_the_answer(notes):
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--json", replay=replan_replay())
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["replans"] == []
    assert (report["error"]["type"], report["error"]["reason"]) == ("TASK_FAILURE", "file_paths")


def test_replan_sends_the_failure_back_and_runs_the_new_task(notes):
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", "--json",
                   "--save", "notes_summary.task.xml", replay=replan_replay())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["result"]["content"] == NOTES_SUMMARY
    assert report["error"] is None
    assert [(r["error"]["reason"], r["xml"].strip()) for r in report["replans"]] == [("file_paths", NOTES_BAD)]
    assert "cannot read file_paths entry 'notes.txt'" in report["replans"][0]["error"]["message"]
    assert report["xml"].strip() == NOTES_GOOD
    assert (notes / "notes_summary.task.xml").read_text().strip() == NOTES_GOOD  # the saved file is the task that ran


def test_replan_text_output_says_why(notes):
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "1",
                   replay=replan_replay())
    assert done.returncode == 0, done.stderr
    assert done.stdout == NOTES_SUMMARY + "\n"
    assert ("the run failed: TASK_FAILURE (file_paths): task 'notes_summary': cannot read file_paths entry "
            "'notes.txt': No such file or directory\nre-planning (1 of 1)") in done.stderr


def test_replan_rounds_are_bounded(notes):
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", "--json",
                   replay=replan_replay(replanned=NOTES_BAD))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert len(report["replans"]) == 2  # two new tasks, each failing the same way; then the error stands
    assert report["error"]["reason"] == "file_paths"


def test_a_replanned_script_needs_the_same_consent(notes):
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "1",
                   replay=replan_replay(replanned=SCRIPT_TASK))
    assert done.returncode == 4
    assert "not run: the task runs shell commands\n  $ touch pwned" in done.stderr
    assert not (notes / "pwned").exists()


def test_a_task_that_names_a_paid_model_the_user_did_not_choose_is_not_run(notes):
    """The answer's <model> was obeyed: a hostile answer naming openai/gpt-4o had it called at once, no question."""
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task name="notes_summary"><description>Summarise the notes</description>'
                         '<model>openai/gpt-4o</model></task>'},
              {"contains": "Summarise the notes", "answer": "a summary"}]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", replay=replay)
    assert done.returncode == 0  # --model given: every task uses it, the answer's <model> is not called
    environment = {**os.environ, "TASKDSL_MODEL": "taskdsl/replay", "TASKDSL_REPLAY_FILE": str(notes / "replay.json")}
    done = subprocess.run([sys.executable, "-m", "taskdsl", "ask", REQUEST], cwd=notes, env=environment,
                          capture_output=True, text=True, timeout=300)  # the model chosen by the environment
    assert done.returncode == 4
    assert done.stderr.splitlines()[-1] == (
        "taskdsl ask: not run: the task calls models you did not choose (openai/gpt-4o), which would receive its "
        "prompts and may cost money; run again with --model M (every task then uses M), or save it and run it with "
        "taskdsl run")


def test_a_task_that_names_a_free_remote_model_the_user_did_not_choose_is_not_run_either(notes):
    """A price of zero is not consent: a free remote model still receives the prompt, the files it reads included,
    at a provider the user did not choose (litellm prices gemini/gemma-3-27b-it at 0)."""
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task name="notes_summary"><description>Summarise the notes</description>'
                         '<model>gemini/gemma-3-27b-it</model></task>'},
              {"contains": "Summarise the notes", "answer": "a summary"}]
    environment = {**os.environ, "TASKDSL_MODEL": "taskdsl/replay", "TASKDSL_REPLAY_FILE": str(notes / "replay.json")}
    (notes / "replay.json").write_text(json.dumps({"answers": replay}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "ask", REQUEST], cwd=notes, env=environment,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 4
    assert "not run: the task calls models you did not choose (gemini/gemma-3-27b-it)" in done.stderr.splitlines()[-1]


def test_a_task_that_reads_files_runs_only_with_allow_reads(notes):
    """The model chooses what the task reads, and the run sends it to the model: a hostile answer read the project's
    .env and .git/config. Like shell commands, reads are shown and run only with --allow-reads."""
    (notes / ".env").write_text("PASSPHRASE=correct-horse-battery\n", encoding="utf-8")
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task name="notes_summary"><description>Summarise the notes</description>'
                         '<file_paths><path>.env</path></file_paths></task>'},
              {"contains": "Summarise the notes", "answer": "summary"}]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", replay=replay)
    assert done.returncode == 4
    assert done.stderr.splitlines()[-3:] == [
        "taskdsl ask: not run: the task reads files (and sends them to the model)",
        "  .env",
        "to run this task and not another, save it (--save FILE), read it, then `taskdsl run FILE`; asking again with "
        "--allow-reads runs the model's next answer, which may be another task"]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", "--allow-reads", replay=replay)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("lock", ["manual_xml", "disable_reparsing"])
def test_a_task_marked_hand_written_is_never_replaced(notes, lock):
    first = NOTES_BAD.replace("</file_paths>", f"</file_paths>\n  <{lock}>true</{lock}>")
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", "--json",
                   replay=replan_replay(first=first))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["replans"] == [] and report["error"]["reason"] == "file_paths"
    quiet = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2",
                    replay=replan_replay(first=first))
    assert f"not re-planned: the task sets <{lock}>true</{lock}>: it is used as written, never replaced" in quiet.stderr


def test_a_locked_library_template_is_never_replaced(notes):
    (notes / "lib.task.xml").write_text(textwrap.dedent("""\
        <library>
          <template name="summarise_notes">
            <task>
              <description>Condense my meeting notes</description>
              <instructions>Summarise these notes in two bullet points.</instructions>
              <file_paths><path>notes.txt</path></file_paths>
              <disable_reparsing>true</disable_reparsing>
            </task>
          </template>
        </library>
        """))
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", "--json",
                   replay=replan_replay())
    report = json.loads(done.stdout)
    assert (done.returncode, report["source"], report["replans"]) == (1, "library", [])
    assert report["error"]["details"]["error"]["reason"] == "file_paths"


def test_a_failed_model_call_is_not_replanned(notes):
    # the task is good, but its run's model call has no recorded answer: another task cannot fix that
    replay = [{"contains": "Request: condense my meeting notes", "answer": NOTES_GOOD}]
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", replay=replay)
    assert done.returncode == 1
    assert "not re-planned: TASK_FAILURE (model_error) is not a failure another task can avoid" in done.stderr


@pytest.mark.parametrize("value", ["-1", "6", "two"])
def test_replan_takes_0_to_5(notes, value):
    done = taskdsl(notes, "ask", REQUEST, "--replan", value)
    assert done.returncode == 2
    assert f"expected a whole number from 0 to 5, got '{value}'" in done.stderr


def test_a_refused_file_read_is_not_replanned(notes):
    # the run's confinement refuses the model's task; a new task is not asked for around the refusal
    outside = NOTES_BAD.replace("notes.txt", "/etc/passwd")
    done = taskdsl(notes, "ask", REQUEST, "--allow-reads", "--model", "taskdsl/replay", "--replan", "2", "--json",
                   replay=replan_replay(first=outside))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["replans"] == [] and report["error"]["type"] == "VALIDATION_ERROR"
    assert "/etc/passwd" in report["error"]["message"] and report["result"] is None


def test_the_runtime_library_ranks_as_match_does(library):
    # the seeds' taskLibrary.find_matching_tasks: the run's compiled definitions, the same scores
    from taskdsl.evaluator.runner import prepare_file

    entry = library / "entry.task.xml"
    entry.write_text('<task name="entry" type="sequential">\n  <description>Count words, then summarise</description>\n'
                     '  <steps>\n    <task ref="word_count"/>\n'
                     '    <call template="summarise"><arg name="text">{{last_output}}</arg></call>\n'
                     '  </steps>\n</task>\n', encoding="utf-8")
    prepared = prepare_file(str(entry))
    from taskdsl.task_system.matching import find_in_task_library

    found = find_in_task_library(prepared.library, "count the words of my essay", limit=2)
    assert [(d.name, k) for d, _, k in found] == [("word_count", "standard"), ("entry", "standard")]
    assert found[0][0] is prepared.library.by_name["word_count"]  # the runtime definition, ready to run
    cli = taskdsl(library, "match", "count the words of my essay", "--json", "--limit", "1")
    assert round(found[0][1], 3) == json.loads(cli.stdout)[0]["score"]


def test_a_task_is_checked_against_the_project_it_runs_in_not_only_the_library(notes):
    """`--library sub` is where templates come from; the task runs where the user is, in that project, whose
    templates the run checks it against. A task that "checks" against the library alone but duplicates a project
    template's name was refused by its run without saying why; it is now sent back for repair like any error."""
    (notes / "first.task.xml").write_text('<task name="notes_summary"><description>Older</description></task>\n',
                                          encoding="utf-8")
    (notes / "sub").mkdir()
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task name="notes_summary"><description>Summarise the notes</description></task>'}]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", "--library", "sub", replay=replay)
    assert done.returncode == 3, done.stderr
    assert "answer 1: 1 checker error(s): TD502; sent back for repair" in done.stderr
    assert "TD502" in done.stderr and "checks" not in done.stderr.splitlines()[1]


def test_the_task_reads_relative_to_where_it_runs_not_the_library(notes):
    (notes / "lib").mkdir()
    replay = [{"contains": "Request: condense my meeting notes",
               "answer": '<task name="notes_summary"><description>Summarise the notes</description>'
                         '<file_paths><path>notes.md</path></file_paths></task>'},
              {"contains": "Summarise the notes", "answer": "a summary"}]
    done = taskdsl(notes, "ask", REQUEST, "--model", "taskdsl/replay", "--library", "lib", "--allow-reads",
                   replay=replay)
    assert done.returncode == 0, done.stderr
    assert "reading (and sending to the model):\n  notes.md\n" in done.stderr  # the project's notes.md, not lib's
