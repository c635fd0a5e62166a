"""`taskdsl render FILE [--task NAME] [--input k=v]… [--inputs F.json] [--model M] [--json]`.

Prints the prompts the run of FILE sends, from a dry run of it (preview.py, evaluator/dry.py): the
run's own evaluation with no model called and no script started. Exit 0, 1 when the
prompt cannot be built (a required input not given — each is named —, a file_paths read refused,
a value that is not there), 2 when the file does not check or cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from taskdsl.cli.run import add_yes_option


def add_render_parser(commands) -> argparse.ArgumentParser:
    p = commands.add_parser("render", help="print the prompts a run would send, calling nothing",
                            description="Print the exact messages a run sends to its models, at each step's path, "
                                        "with an estimate of their tokens and cost: a dry run of the run, calling "
                                        "no model and starting no script. A value only a run can know is a "
                                        "{{run: …}} placeholder saying where it comes from.")
    p.add_argument("file", help="the template file (*.task.xml)")
    p.add_argument("--task", help="a named task or template of a library file (default: the root task)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input or param (repeatable)")
    p.add_argument("--inputs", metavar="FILE.json", help="a JSON object of inputs (--input wins over it)")
    p.add_argument("--model", help="the model for every atomic task (as `taskdsl run --model`)")
    p.add_argument("--allow-read", action="append", default=[], metavar="PATH",
                   help="let file_paths read this folder (or file) outside the project, as `taskdsl run`")
    p.add_argument("--json", action="store_true", help="print the prompts as JSON")
    add_yes_option(p)  # the project's own allow_read reads for the preview only once agreed, as for a run
    p.set_defaults(func=render_command)
    return p


def render_command(args) -> int:
    from taskdsl.authoring.preview import preview_prompts, preview_text
    from taskdsl.project.config import settings_for
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import prepare_file, refuse_unagreed
    from taskdsl.cli.run import USAGE_REASONS, agree, masked, masked_json, parse_inputs, refused

    try:
        inputs = parse_inputs(args.input, args.inputs)
    except (OSError, ValueError) as e:
        print(f"taskdsl render: {e}", file=sys.stderr)
        return 2
    try:
        project = settings_for(args.file)[0]  # the project's taskdsl.toml: its model, globals, library paths
        prepared = prepare_file(args.file, args.task, inputs, settings=project, allow_read=tuple(args.allow_read))
        agree(prepared, args, project.default_model, args.model)
        refuse_unagreed(prepared)  # what the project widens is read for a preview only once agreed, as for a run
        if prepared.missing:  # the run would not send this prompt: say which inputs it needs
            noun = "input" if len(prepared.missing) == 1 else "inputs"
            given = " ".join(f"--input {name}=…" for name in prepared.missing)
            print(f"taskdsl render: '{prepared.label}' needs the {noun} "
                  f"{', '.join(repr(n) for n in prepared.missing)}: pass {given} (or --inputs FILE.json)",
                  file=sys.stderr)
            return 1
        previews = asyncio.run(preview_prompts(prepared, args.model, project.default_model))
    except (OSError, UnreadableTemplate, TemplateErrors, CompileError) as e:
        return refused("render", args.file, e)
    except TaskError as e:
        if e.reason in USAGE_REASONS:  # how the command was called: no entry, an unknown --task or --input
            print(masked(f"taskdsl render: {e.message}"), file=sys.stderr)
            return 2
        print(masked(f"taskdsl render: cannot build the prompt: {e.message}"), file=sys.stderr)
        return 1
    if args.json:
        print(masked_json([p.to_json() for p in previews]))
    else:
        sys.stdout.write(masked(preview_text(previews)))
    return 0
