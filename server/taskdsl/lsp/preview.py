"""The server command `taskdsl.previewPrompt`: the same previews as `taskdsl render`, over the
editor's live index and open buffers (what the run command would prepare).

Arguments as `taskdsl.runTask`'s: `[uri, task?, inputs?, model?]` or `{uri, task?, inputs?,
model?}`. Answers `{"text": …, "prompts": [{task, model, system, user, tokens, cost}], "error":
null}`, or `{"text": "", "prompts": [], "error": {type, reason, message}}`: never raises.
"""

from __future__ import annotations

import logging

PREVIEW_COMMAND = "taskdsl.previewPrompt"
log = logging.getLogger(__name__)


def register_preview(server, runs) -> None:
    """Register the command; `runs` (features.run.Runs) gives the live index, buffers and settings."""

    @server.command(PREVIEW_COMMAND)
    async def preview_prompt(ls, *args):
        return await preview_command(runs, args)


async def preview_command(runs, args) -> dict:
    from taskdsl.authoring.preview import preview_prompts, preview_text
    from taskdsl.evaluator.plan import prepare
    from taskdsl.lsp.run import parse_arguments
    from taskdsl.features.run_result import error_json, failure
    from taskdsl.features.util import uri_to_path
    from taskdsl.support.redaction import Redactor

    def refuse(error: dict) -> dict:
        return {"text": "", "prompts": [], "error": error}

    try:
        spec = parse_arguments(args, PREVIEW_COMMAND)
    except ValueError as e:
        return refuse(failure(str(e), "arguments"))
    path = uri_to_path(spec["uri"])
    if path is None:
        return refuse(failure(f"only files can be previewed, not {spec['uri']}", "not_a_file"))
    settings = runs.settings()
    try:
        text = runs.document_text(spec["uri"], path)
        prepared = prepare(runs.index(), path, spec["task"], spec["inputs"], text=text, read=runs.reader(),
                           settings=settings)
        previews = await preview_prompts(prepared, spec["model"], settings.default_model)
    except Exception as error:  # a preview never takes the server down
        expected = hasattr(error, "to_json") or hasattr(error, "diagnostics") or hasattr(error, "code") or \
            type(error).__name__ == "UnreadableTemplate"  # a device, a binary or huge file: said, not a bug
        if not expected:
            log.exception("preview of %s failed unexpectedly", spec["uri"])
        return refuse(Redactor().mask(error_json(error)))
    redactor = Redactor()
    return {"text": redactor.text(preview_text(previews)), "prompts": [redactor.mask(p.to_json()) for p in previews],
            "error": None}
