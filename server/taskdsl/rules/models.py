"""Model identifiers (TD601), against litellm's bundled model map (read as JSON, never imported)."""

from __future__ import annotations

from taskdsl.diagnostics import Fix, Severity, TextEdit
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import make, text_span


@rule("TD601", Severity.WARNING, "model identifier unknown to litellm",
      what="The `<model>` names no model of litellm's bundled model map, and its provider prefix is not "
           "one that serves any name (`ollama/…`, `openai/…`, `hosted_vllm/…`, `azure/…` …). "
           "`taskdsl/echo` and `taskdsl/replay` are taskdsl's own offline models.",
      why="litellm would fail to route the call, or price and size the context window wrongly. Usually a "
          "typo or a retired model name.",
      bad='<model>gpt-4o-mni</model>',
      good='<model>gpt-4o-mini</model>',
      fix="Use a name litellm knows (did-you-mean quick fix), or a provider prefix such as `ollama/`.",
      tags=("model",))
def model_rule(ctx: RuleContext):
    from taskdsl import models  # the map loads on first use, as JSON

    for element in ctx.tagged("model"):
        span = text_span(element)
        name = element.text.strip()
        if span is None or not name or models.is_known_model(name):
            continue
        suggestions = models.suggest(name)
        message = f"model '{name}' is unknown to litellm's model map"
        fixes = []
        if suggestions:
            message += ": did you mean " + " or ".join(f"'{s}'" for s in suggestions[:2]) + "?"
            fixes = [Fix(f"Replace with '{s}'", (TextEdit(span, s),), safe=False) for s in suggestions]
        else:
            message += ": use a litellm model name, or a provider prefix such as 'ollama/' or 'openai/'"
        yield make("TD601", span, message, fixes=fixes)
