"""The plan a user agrees to, read exactly: every line of the question for a batch with many
commands, models with fallbacks, capped lists, reads outside the project, missing inputs; the files
known only when the run gets there (the mutants of taskdsl.evaluator.consent that the other tests let
live, see docs/security.md "Mutation testing")."""

import os
import textwrap

from taskdsl.evaluator import consent
from taskdsl.evaluator.consent import PlannedCommand, PlanView, ReadFiles, render_plan
from taskdsl.evaluator.plan import prepare


def view(folder, **fields) -> PlanView:
    base = dict(label="job", path=os.path.join(folder, "job.task.xml"), folder=folder, commands=(), models=(),
                estimate=0.0, files=ReadFiles(), inputs=(), templates=(os.path.join(folder, "job.task.xml"),),
                digest="0123456789abcdef" * 4)
    return PlanView(**{**base, **fields})


def test_the_question_for_a_batch_shows_every_part_of_the_plan(tmp_path):
    folder = str(tmp_path / "proj")
    files = tuple(os.path.join(folder, f"doc{n}.md") for n in range(11))
    plan = view(
        folder, data=os.path.join(folder, "rows.jsonl"), rows=3,
        commands=(PlannedCommand('echo "${TASKDSL_SUB_1}"', (("TASKDSL_SUB_1", "{{word}}"),)),
                  PlannedCommand("printf 'a\\n'\ncat notes.md\n")),
        models=(("gpt-4o", True), ("openai/local-a", False), ("openai/local-b", False)), estimate=1234.5,
        fallbacks=(("gpt-4o", ("openai/local-a", "openai/local-b"), 0.5),), cache=True,
        files=ReadFiles(files, ("the files printed by: ls",)), read_limits=(20, 3_000),
        allow_read=("/srv/shared",), widened=(("allow_read", "/srv/shared"),),
        inputs=(("word", "(each row's)"),), missing=("topic", "tone"),
        templates=(os.path.join(folder, "job.task.xml"), os.path.join(folder, "lib", "steps.task.xml"), "/opt/x.task.xml"),
        config_files=(os.path.join(folder, "taskdsl.toml"),))
    why = consent.reasons(plan)
    assert why == ["scripts", "cost", "files", "widened"]
    assert render_plan(plan, why).splitlines() == [
        "Running 'job' (job.task.xml) for each of the 3 rows of rows.jsonl will:",
        f"  run these 2 shell commands in {folder}:",
        '    $ echo "${TASKDSL_SUB_1}"',
        "        TASKDSL_SUB_1 = the value of {{word}}",
        "    $ printf 'a\\n'",
        "      cat notes.md",
        "  call gpt-4o (priced), openai/local-a (price unknown), openai/local-b (price unknown)",
        "    estimated cost: about $1,234.50 or more, plus what openai/local-a, openai/local-b cost",
        "    if gpt-4o still fails after its retries: openai/local-a, then openai/local-b (about $0.5000 more if used)",
        "    answers already in the cache are reused: cached calls cost nothing",
        "  read these files:",
        *[f"    doc{n}.md" for n in range(10)],
        "    … and 1 more",
        "    the files printed by: ls (known when it runs)",  # never counted away
        "    (at most 20 files and 3,000 bytes in all)",
        "  may read outside the project, in:",
        "    /srv/shared",
        "  with the inputs:",
        "    word = (each row's)",
        "  once given the inputs: topic, tone",
        "  using the templates of:",
        "    lib/steps.task.xml",
        "    /opt/x.task.xml",
        "  with what the project's configuration widens (it applies only if you agree):",
        "    allow_read = /srv/shared",
        "  with the configuration of: taskdsl.toml",
        "Asked because it executes shell commands, it calls a model that may cost money, it reads files chosen "
        "only when it runs (listed above) and the project's configuration widens what it may read, write or run "
        "(allow_read, trace_dir, library_paths).",
        "Plan " + "0123456789abcdef" * 2,
    ]


def test_the_question_for_a_plan_that_runs_nothing_costly(tmp_path):
    folder = str(tmp_path)
    plan = view(folder, models=(("openai/local", False),), files=ReadFiles((os.path.join(folder, "a.md"),)),
                allow_read=("/srv/shared",), widened=(("allow_read", "/srv/shared"),))
    assert consent.reasons(plan) == ["cost", "widened"]  # a read while a project's allow_read is in force
    assert render_plan(plan, ["cost", "widened"]).splitlines() == [
        "Running 'job' (job.task.xml) will:",
        "  call openai/local (price unknown)",
        "    estimated cost: about $0.0000 or more, plus what openai/local costs",
        "  read these files:",
        "    a.md",
        "    (at most 1,000 files and 50,000,000 bytes in all)",
        "  may read outside the project, in:",
        "    /srv/shared",
        "  with what the project's configuration widens (it applies only if you agree):",
        "    allow_read = /srv/shared",
        "Asked because it calls a model that may cost money and the project's configuration widens what it may "
        "read, write or run (allow_read, trace_dir, library_paths).",
        "Plan " + "0123456789abcdef" * 2,
    ]
    assert render_plan(plan, ["cost"]).splitlines()[-2:] == [
        "Asked because it calls a model that may cost money.",
        "Plan " + "0123456789abcdef" * 2,
    ]
    assert render_plan(view(folder, estimate=0.9999)).splitlines() == [
        "Running 'job' (job.task.xml) will:", "  run nothing that executes or calls a model", "Plan " + "0123456789abcdef" * 2]
    one_dollar = view(folder, models=(("gpt-4o", True),), estimate=1.0)
    assert "    estimated cost: about $1.00 or more" in render_plan(one_dollar).splitlines()
    just_under = view(folder, models=(("gpt-4o", True),), estimate=0.99994)
    assert "    estimated cost: about $0.9999 or more" in render_plan(just_under).splitlines()


def test_a_list_of_exactly_ten_is_shown_whole(tmp_path):
    folder = str(tmp_path)
    files = tuple(os.path.join(folder, f"d{n}.md") for n in range(10))
    lines = render_plan(view(folder, files=ReadFiles(files))).splitlines()
    assert lines[2:12] == [f"    d{n}.md" for n in range(10)] and "more" not in "".join(lines)


def test_files_known_only_when_the_run_gets_there_are_named(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    path = tmp_path / "t.task.xml"
    path.write_text(textwrap.dedent("""\
        <task type="sequential" name="t">
          <steps>
            <task name="listed">
              <description>Read</description>
              <file_paths source="command"><command>ls   *.md |
                head -3</command></file_paths>
            </task>
            <task name="found">
              <description>Read</description>
              <file_paths source="description"><description>the   holiday
                notes</description></file_paths>
            </task>
            <task name="literal">
              <description>Read</description>
              <file_paths><path>a.md</path><path>{{which}}.md</path><path>a.md</path></file_paths>
            </task>
          </steps>
        </task>
        """), encoding="utf-8")
    prepared = prepare(None, str(path), None, {})
    files = consent.read_files(prepared.node, prepared.library)
    assert files == ReadFiles((os.path.realpath(tmp_path / "a.md"),),
                              ("the files printed by: ls *.md | head -3", "the files found for: the holiday notes",
                               "{{which}}.md"))


def test_a_command_the_checker_refuses_is_shown_as_written():
    assert consent.planned_command("echo `{{x}}`") == PlannedCommand("echo `{{x}}`")
    assert consent.planned_command("echo {{x}}") == PlannedCommand('echo "${TASKDSL_SUB_1}"',
                                                                   (("TASKDSL_SUB_1", "{{x}}"),))


PRICED = """<task type="sequential" name="p">
  <inputs><input name="topic"/><input name="tone"/></inputs>
  <steps>
    <task><description>Write about {{topic}}</description><model>gpt-4o</model></task>
  </steps>
</task>
"""


def priced_project(folder, toml=""):
    (folder / "taskdsl.toml").write_text(toml, encoding="utf-8")
    (folder / "p.task.xml").write_text(PRICED, encoding="utf-8")
    return str(folder / "p.task.xml")


def test_a_batch_plan_is_one_plan_for_every_row_and_pins_the_rows_file(tmp_path):
    from taskdsl.evaluator.runner import prepare_file

    path = priced_project(tmp_path, '[models."gpt-4o"]\nfallbacks = ["gpt-4o-mini"]\n')
    prepared = prepare_file(path, None, {"topic": "rain", "tone": "dry"})
    single = consent.plan_view(prepared, "taskdsl/echo")
    batch = consent.plan_view(prepared, "taskdsl/echo", data=("rows.jsonl", "a" * 64, 3))
    assert (batch.data, batch.rows) == ("rows.jsonl", 3)
    assert batch.inputs == (("tone", "(each row's)"), ("topic", "(each row's)"))
    assert batch.estimate == 3 * single.estimate > 0
    assert [(m, c) for m, c, _ in batch.fallbacks] == [("gpt-4o", ("gpt-4o-mini",))]
    assert batch.fallbacks[0][2] == 3 * single.fallbacks[0][2] > 0
    other_rows = consent.plan_view(prepared, "taskdsl/echo", data=("rows.jsonl", "b" * 64, 3))
    assert len({single.digest, batch.digest, other_rows.digest}) == 3
    two_rows = consent.plan_view(prepared, "taskdsl/echo", data=("rows.jsonl", "a" * 64, 2))
    assert two_rows.estimate == 2 * single.estimate
    one_row = consent.plan_view(prepared, "taskdsl/echo", data=("rows.jsonl", "a" * 64, 1))
    assert one_row.estimate == single.estimate and one_row.rows == 1


def test_the_digest_pins_the_fallbacks_and_a_cached_plan_says_so(tmp_path):
    from taskdsl.evaluator.runner import prepare_file

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = priced_project(tmp_path / "a", '[models."gpt-4o"]\nfallbacks = ["gpt-4o-mini"]\n')
    second = priced_project(tmp_path / "b", '[models."gpt-4o"]\nfallbacks = ["o1"]\n')
    inputs = {"topic": "rain", "tone": "dry"}
    views = [consent.plan_view(prepare_file(p, None, inputs), "taskdsl/echo", cache=True) for p in (first, second)]
    assert views[0].cache is True and "    answers already in the cache are reused: cached calls cost nothing" in \
        render_plan(views[0]).splitlines()
    assert views[0].digest != views[1].digest
    same_entry = prepare_file(first, None, inputs)
    same_entry.fallbacks = {**same_entry.fallbacks, "gpt-4o": ("o1",)}  # the same entry, another fallback
    assert consent.plan_view(same_entry, "taskdsl/echo").digest != views[0].digest


def test_missing_inputs_are_in_the_plan(tmp_path):
    from taskdsl.evaluator.runner import prepare_file

    view = consent.plan_view(prepare_file(priced_project(tmp_path), None, {"tone": "dry"}), "taskdsl/echo")
    assert view.missing == ("topic",)


def test_a_plan_whose_inputs_hold_half_a_character_is_pinned_and_shown(tmp_path):
    """A value from JSON ("\\ud800") can hold a lone surrogate: the plan and its digest must not fail."""
    from taskdsl.evaluator.runner import prepare_file

    prepared = prepare_file(priced_project(tmp_path), None, {"topic": "rain \ud800", "tone": "dry"})
    view = consent.plan_view(prepared, "taskdsl/echo")
    assert len(view.digest) == 64 and ("topic", "rain \ud800") in view.inputs


def test_inputs_are_shown_on_one_line_cut_at_80_characters_secrets_masked(monkeypatch):
    monkeypatch.setenv("SOME_TOKEN", "s3cr3t-value-1234")
    shown = dict(consent.shown_inputs({
        "exact": "x" * 80, "long": "y" * 81, "lines": "a\n  b\tc", "number": 3.5, "list": ["é", 1],
        "api_key": "short", "note": "uses s3cr3t-value-1234 and sk-live-abcdefgh", "my_password": "pw-12345678",
        "other": "pw-12345678 again", "path": {"p": __import__("pathlib").Path("/x")}}))
    assert shown["exact"] == "x" * 80
    assert shown["long"] == "y" * 79 + "…"
    # a line break is shown as its escape (a\nb and a b are different values), runs of spaces and tabs as one space
    assert shown["lines"] == "a\\n b c"
    assert (shown["number"], shown["list"]) == ("3.5", '["é", 1]')
    assert shown["api_key"] == "***"  # by its name
    assert shown["note"] == "uses *** and sk-live-abcdefgh"  # the environment's secret, by its value
    assert (shown["my_password"], shown["other"]) == ("***", "*** again")  # a secret input's value, anywhere
    assert shown["path"] == '{"p": "/x"}'


def test_the_plan_names_what_the_memory_may_read_under_the_configured_index(tmp_path):
    import json as json_module

    (tmp_path / "taskdsl.toml").write_text('[memory]\nindex = "memory/files.json"\n', encoding="utf-8")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "q3.md").write_text("Revenue rose.\n", encoding="utf-8")
    (tmp_path / "tasks").mkdir()
    path = tmp_path / "tasks" / "r.task.xml"
    path.write_text('<task type="sequential" name="report"><steps>'
                    '<task name="revenue"><description>Sum revenue</description><context_management>'
                    '<inherit_context>none</inherit_context><fresh_context>enabled</fresh_context></context_management>'
                    '</task><task name="plain"><description>Say it</description></task>'
                    '</steps></task>\n', encoding="utf-8")
    from taskdsl.evaluator.runner import prepare_file

    def view():
        return consent.plan_view(prepare_file(str(path)), "taskdsl/echo")

    assert view().files.unknown == ()
    (tmp_path / "memory").mkdir()

    def index(entries):
        (tmp_path / "memory" / "files.json").write_text(json_module.dumps(entries), encoding="utf-8")

    index({"reports/q3.md": "Q3 revenue"})
    first = view()
    assert first.files == ReadFiles((), ("the files the memory index (../memory/files.json) matches for 'revenue'",))
    index({"reports/q3.md": "Q3 revenue and costs"})
    assert view().digest != first.digest


def test_a_plan_follows_calls_into_the_library_for_models_files_and_memory(tmp_path):
    import json as json_module

    from taskdsl.evaluator.runner import prepare_file

    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "notes.md").write_text("notes", encoding="utf-8")
    (tmp_path / ".taskdsl").mkdir()
    (tmp_path / ".taskdsl" / "memory.json").write_text(json_module.dumps({"notes.md": "Notes"}), encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text("""<library>
  <template name="ask" params="x">
    <task name="asking"><description>Ask about the notes</description><model>gpt-4o</model>
      <context_management><inherit_context>none</inherit_context><fresh_context>enabled</fresh_context></context_management>
      <file_paths><path>notes.md</path></file_paths>
    </task>
  </template>
</library>
""", encoding="utf-8")
    (tmp_path / "main.task.xml").write_text('<call template="ask"><arg>rain</arg></call>\n', encoding="utf-8")
    view = consent.plan_view(prepare_file(str(tmp_path / "main.task.xml")), "taskdsl/echo")
    assert view.models == (("gpt-4o", True),) and view.estimate > 0.005
    assert view.files == ReadFiles((os.path.realpath(tmp_path / "notes.md"),),
                                   ("the files the memory index (.taskdsl/memory.json) matches for 'asking'",))


def test_the_digest_pins_which_model_a_fallback_belongs_to(tmp_path):
    """The same models in all; only which of them falls back to o1 differs: another plan."""
    from taskdsl.evaluator.runner import prepare_file

    template = """<task type="sequential" name="two">
  <steps>
    <task><description>First</description><model>gpt-4o</model></task>
    <task><description>Second</description><model>gpt-4o-mini</model></task>
  </steps>
</task>
"""
    digests, models = [], []
    for owner in ("gpt-4o", "gpt-4o-mini"):
        (tmp_path / "taskdsl.toml").write_text(f'[models."{owner}"]\nfallbacks = ["o1"]\n', encoding="utf-8")
        (tmp_path / "two.task.xml").write_text(template, encoding="utf-8")
        view = consent.plan_view(prepare_file(str(tmp_path / "two.task.xml")), "taskdsl/echo")
        digests.append(view.digest)
        models.append([name for name, _ in view.models])
    assert models[0] == models[1] == ["gpt-4o", "gpt-4o-mini", "o1"]
    assert digests[0] != digests[1]


def test_the_plan_shows_the_projects_read_limits(tmp_path):
    from taskdsl.evaluator.runner import prepare_file

    path = priced_project(tmp_path, "[run]\nmax_read_files = 5\nmax_read_bytes = 1234\n")
    view = consent.plan_view(prepare_file(path, None, {"topic": "rain", "tone": "dry"}), "taskdsl/echo")
    assert view.read_limits == (5, 1234)


def test_every_command_and_every_read_outside_is_shown_however_many(tmp_path):
    """An agreed plan (the question's Run, --yes, --agree) runs nothing it did not show: commands, files outside
    the template's folder and folders outside the project are never counted away ("… and N more"); only files in
    the folder are, and the digest covers them all."""
    folder = str(tmp_path / "proj")
    commands = tuple(PlannedCommand(f"echo {n}") for n in range(11)) + (PlannedCommand("touch hidden"),)
    outside_files = tuple(f"/srv/data/f{n}.md" for n in range(12))
    plan = view(folder, commands=commands, files=ReadFiles(outside_files), allow_read=tuple(f"/srv/d{n}" for n in range(12)))
    text = render_plan(plan, consent.reasons(plan)).splitlines()
    assert "    $ touch hidden" in text and all(f"    $ echo {n}" in text for n in range(11))
    assert all(f"    {f}" in text for f in outside_files)
    assert all(f"    /srv/d{n}" in text for n in range(12))
    assert not any("more" in line for line in text)
