"""Model identifiers (TD601), against litellm's bundled model map (read as JSON, never imported)."""

from __future__ import annotations

from taskdsl.language.diagnostics import Fix, Severity, TextEdit
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import TASK_TAGS, make, may_suggest, text_span
from taskdsl.meaning.model import BUILTIN_MODELS, builtin_model_problem


@rule("TD601", Severity.WARNING, "model identifier unknown to litellm",
      what="The `<model>` names no model of litellm's bundled model map, and its provider prefix is not "
           "one that serves any name (`ollama/…`, `openai/…`, `hosted_vllm/…`, `azure/…` …). "
           "`taskdsl/echo` and `taskdsl/replay` are taskdsl's own offline models, and the only ones under "
           "`taskdsl/`: any other `taskdsl/…` name is an error (the run refuses it). An empty `<model/>` "
           "is TD105.",
      why="litellm would fail to route the call, or price and size the context window wrongly. Usually a "
          "typo or a retired model name.",
      bad='<model>gpt-4o-mni</model>',
      good='<model>gpt-4o-mini</model>',
      fix="Use a name litellm knows, or a provider prefix such as `ollama/`. Quick fix (unsafe: a guessed "
          "model): replace the name with a suggestion of the message.",
      tags=("model",))
# (TD105 for an empty <model/> is reported here too: the schema allows empty text)
def model_rule(ctx: RuleContext):
    from taskdsl.language import models  # the map loads on first use, as JSON

    for element in ctx.tagged("model"):
        span = text_span(element)
        name = element.text.strip()
        if span is None or not name:
            if element.parent is not None and element.parent.tag in TASK_TAGS:
                yield make("TD105", element.name_span,
                           "<model> is empty: name a model (e.g. gpt-4o-mini) or remove the element")
            continue
        builtin = builtin_model_problem(name)
        if builtin:
            fixes = [Fix(f"Replace with '{m}'", (TextEdit(span, m),), safe=False) for m in BUILTIN_MODELS
                     if m.split("/")[1][:2] == name.split("/", 1)[1][:2]]
            yield make("TD601", span, builtin, severity=Severity.ERROR, fixes=fixes)
            continue
        if models.is_known_model(name):
            continue
        suggestions = models.suggest(name) if may_suggest(ctx) else []
        message = f"model '{name}' is unknown to litellm's model map"
        fixes = []
        if suggestions:
            message += ": did you mean " + " or ".join(f"'{s}'" for s in suggestions[:2]) + "?"
            fixes = [Fix(f"Replace with '{s}'", (TextEdit(span, s),), safe=False) for s in suggestions]
        else:
            message += ": use a litellm model name, or a provider prefix such as 'ollama/' or 'openai/'"
        yield make("TD601", span, message, fixes=fixes)
