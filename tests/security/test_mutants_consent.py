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
        allow_read=("/srv/shared",), inputs=(("word", "(each row's)"),), missing=("topic", "tone"),
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
        "    … and 2 more",
        "    (at most 20 files and 3,000 bytes in all)",
        "  may read outside the project, in:",
        "    /srv/shared",
        "  with the inputs:",
        "    word = (each row's)",
        "  once given the inputs: topic, tone",
        "  using the templates of:",
        "    lib/steps.task.xml",
        "    /opt/x.task.xml",
        "  with the configuration of: taskdsl.toml",
        "Asked because it executes shell commands, it calls a model that may cost money, it reads files outside "
        "the template's folder and it may read folders outside the project (allow_read).",
        "Plan 0123456789ab",
    ]


def test_the_question_for_a_plan_that_runs_nothing_costly(tmp_path):
    folder = str(tmp_path)
    plan = view(folder, models=(("openai/local", False),), files=ReadFiles((os.path.join(folder, "a.md"),)),
                allow_read=("/srv/shared",))
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
        "Asked because it calls a model that may cost money and it may read folders outside the project "
        "(allow_read).",
        "Plan 0123456789ab",
    ]
    assert render_plan(view(folder, estimate=0.9999)).splitlines() == [
        "Running 'job' (job.task.xml) will:", "  run nothing that executes or calls a model", "Plan 0123456789ab"]
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
