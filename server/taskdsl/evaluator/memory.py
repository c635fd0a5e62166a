"""The memory system (SPEC §7, §4, §15): a global index of file metadata, associative matching over
it, and the context a task with `fresh_context=enabled` gets from it.

- The global index is the project's index file (taskdsl.project.memory_index): relative path →
  metadata string, written by `taskdsl memory index` and editable by hand. A project without
  one has an empty index: fresh context then finds nothing (the checker's TD308 says so).
- `get_relevant_context_for(ContextGenerationInput)` → `AssociativeMatchResult(context,
  matches=[(path, metadata)])`. No ranking (the seeds): matches come back in index order.
  - local (the default, offline): each entry's path words and metadata are a document of word
    stems (taskdsl.support.words, as `taskdsl match` ranks templates); an entry is selected when
    it shares a word with the request and its BM25 relevance is at least half the best entry's
    (at most MAX_MATCHES: the most relevant).
  - model (`[memory] matcher = "model"`): the `atomic:associative_matching` template (built in,
    or the project's task or template with that type:subtype key) gets the ADR's structured
    request and the index and answers the matching paths as JSON. It is sent metadata only
    (paths and their metadata), never a file's contents. A path it answers that is not in the
    index, or lies outside the project, is refused and the refusal noted.
- `read_matches`: the matched files' contents, each read through the project's one reader and
  confined like every read of a run (taskdsl.project.confine); a refused one is noted, not read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from taskdsl.support import jsontext
from taskdsl.project import confine
from taskdsl.project import memory_index as index_file

MAX_MATCHES = 20
RELATIVE_SCORE = 0.5  # of the best entry's relevance: what the local matcher still selects
MAX_FILE_CHARS = 200_000  # of one matched file in a prompt (as file_paths)
MAX_REQUEST_CHARS = 10_000
BUILTIN_MATCHER = Path(__file__).resolve().parent.parent / "templates" / "associative_matching.task.xml"
MATCHER_KEY = "atomic:associative_matching"
#: the ADR's standardized headings of the structured request, in order
HEADINGS = (("previous_outputs", "Previous outputs"), ("inherited_context", "Inherited context"),
            ("task_text", "Task text"))


@dataclass
class ContextGenerationInput:
    task_text: str
    previous_outputs: str | None = None
    inherited_context: str | None = None

    def as_xml(self) -> str:
        """The structured request of the ADR: the three fields, each under its own heading (an
        element), always all three ("(none)" when a field does not apply); the values escaped, so
        no value can close its element or open another."""
        parts = []
        for tag, _ in HEADINGS:
            value = getattr(self, tag) or "(none)"
            parts.append(f"<{tag}>\n{escape(value[:MAX_REQUEST_CHARS])}\n</{tag}>")
        return "\n".join(parts)

    def text(self) -> str:
        return "\n".join(v for v in (self.task_text, self.previous_outputs or "", self.inherited_context or "") if v)


@dataclass
class AssociativeMatchResult:
    context: str
    matches: list[tuple[str, str | None]] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)  # {"path", "reason"}: answered but not used
    matcher: str = "local"
    usage: dict = field(default_factory=dict)  # the model matcher's calls, tokens and cost (its dataUsage)


@dataclass
class MemoryContext:
    """What fresh context added to a task: the text for its prompt and what the notes say."""
    text: str = ""
    read: list[str] = field(default_factory=list)  # the files read (relative to the project root)
    notes: dict[str, Any] = field(default_factory=dict)
    usage: dict = field(default_factory=dict)  # what matching cost (the model matcher's calls)


class MemorySystem:
    def __init__(self, root: str | None = None, index: dict[str, str] | None = None, *,
                 index_path: str | None = None, matcher: str = "local"):
        self.root = os.path.abspath(root) if root else None
        self.index_path = index_path or (index_file.index_path(self.root) if self.root else None)
        self.matcher = matcher
        self._index = dict(index) if index is not None else None
        self.exists = index is not None

    @classmethod
    def for_project(cls, root: str, settings=None) -> MemorySystem:
        "The memory of the project at root, as its taskdsl.toml's [memory] table says."
        return cls(root, index_path=index_file.index_path(root, settings),
                   matcher=getattr(settings, "memory_matcher", None) or "local")

    # ---------------------------------------------------------------- the global index

    def get_global_index(self) -> dict[str, str]:
        """relative path → metadata, in the index file's order (entries outside the project left out)."""
        if self._index is None:
            loaded = index_file.load(self.index_path, self.root) if self.index_path and self.root else None
            self.exists = bool(loaded and loaded.exists)
            self._index = dict(loaded.entries) if loaded else {}
        return self._index

    def update_global_index(self, index: dict[str, str]) -> None:
        """Replace the index, and write it to the project's index file when there is one."""
        self._index = dict(index)
        if self.index_path and self.root:
            index_file.save(self.index_path, self.root, self._index)
            self.exists = True

    def shown_index(self) -> str:
        "The index as `path: metadata` lines: what the model matcher is sent (metadata only)."
        return "\n".join(f"{path}: {' '.join(metadata.split())}" for path, metadata in self.get_global_index().items())

    # ---------------------------------------------------------------- matching

    def local_matches(self, text: str) -> list[str]:
        """The index's entries relevant to text, in index order (no ranking)."""
        from taskdsl.support.words import bm25, tokens

        entries = list(self.get_global_index().items())
        query = list(dict.fromkeys(tokens(text[:MAX_REQUEST_CHARS])))
        if not entries or not query:
            return []
        corpus = [tokens(f"{os.path.splitext(path)[0]} {metadata}") for path, metadata in entries]
        if not any(corpus):
            return []
        scores = bm25(corpus).get_scores(query)
        wanted = set(query)
        candidates = [(float(score), i) for i, (words, score) in enumerate(zip(corpus, scores)) if wanted & set(words)]
        if not candidates:
            return []
        best = max(score for score, _ in candidates)
        kept = sorted((c for c in candidates if c[0] >= RELATIVE_SCORE * best), key=lambda c: (-c[0], c[1]))
        chosen = sorted(i for _, i in kept[:MAX_MATCHES])
        return [entries[i][0] for i in chosen]

    async def get_relevant_context_for(self, request: ContextGenerationInput, ctx: Any = None) -> AssociativeMatchResult:
        """The seeds' getRelevantContextFor: the files of the index relevant to the request.
        `ctx` (the evaluator's Ctx) is needed by the model matcher, which runs a task."""
        index = self.get_global_index()
        if self.matcher == "model" and ctx is not None and index and ctx.run.preview:
            # a dry run records the matcher's prompt (the run sends it) and calls nothing: the files are the run's
            from taskdsl.evaluator.dry import mark

            await self._ask_matcher(request, ctx)
            return AssociativeMatchResult(mark(f"the files the memory's model matcher chooses for {ctx.path}"),
                                          [], [], "model")
        spent: dict = {}
        if self.matcher == "model" and ctx is not None and index:
            found, refused = await self._model_matches(request, ctx, spent)
        else:
            found, refused = self.local_matches(request.text()), []
        chosen = set(found)
        matches = [(path, metadata or None) for path, metadata in index.items() if path in chosen]
        lines = [f"- {path}: {' '.join(metadata.split())}" if metadata else f"- {path}" for path, metadata in matches]
        context = "Relevant files (memory index):\n" + "\n".join(lines) if lines else ""
        return AssociativeMatchResult(context, matches, refused, self.matcher if ctx is not None else "local", spent)

    async def _model_matches(self, request: ContextGenerationInput, ctx, spent: dict) -> tuple[list[str], list[dict]]:
        """The paths the associative_matching template answers: those of the index, in its order;
        every other path answered is refused, saying why."""
        from taskdsl.evaluator.results import TaskError

        result = await self._ask_matcher(request, ctx)
        spent.update(result.notes.get("dataUsage") or {})
        answer = result.parsed_content if result.parsed_content is not None else _json_or_none(result.content)
        if isinstance(answer, dict):
            answer = answer.get("paths", answer.get("files"))
        if not isinstance(answer, list):
            raise TaskError("INVALID_OUTPUT", "the associative_matching template must answer a JSON list of paths "
                            f"of the memory index; it answered {result.content[:200]!r}", "memory_matcher")
        index = self.get_global_index()
        found, refused = [], []
        for item in answer:
            path = item if isinstance(item, str) else json.dumps(item)
            key = path.strip().replace(os.sep, "/")
            key = key[2:] if key.startswith("./") else key
            outside = index_file.outside_reason(key, self.root) if self.root else None
            if outside is not None:
                refused.append({"path": path, "reason": f"{outside}: refused"})
            elif key not in index:
                refused.append({"path": path, "reason": "not in the memory index: refused"})
            elif key not in found:
                found.append(key)
        return found, refused

    async def _ask_matcher(self, request: ContextGenerationInput, ctx):
        """The associative_matching template's answer for the request (in a dry run: its prompt
        recorded, a placeholder for the answer): the model it names must be one the run's plan calls."""
        from dataclasses import replace

        from taskdsl.evaluator.env import Env
        from taskdsl.evaluator.results import TaskError

        run = ctx.run
        atomic = matcher_task(run.global_env.get("taskLibrary"))
        model = atomic.model_for(run)
        if run.dry is None:  # a dry run shows its prompt, calls nothing
            refuse_matcher_model(model)
        from taskdsl.language.models import costs_money

        agreed = run.agreed_models() if run.agreed_models else None
        if agreed is not None and costs_money(model) and model not in agreed:
            raise TaskError("VALIDATION_ERROR", f"the associative_matching template names the model {model}, which "
                            "the run's plan did not call: it may cost money and the run's consent did not cover it",
                            "memory_matcher", {"model": model})
        args = {"request": request.as_xml(), "index": self.shown_index()}
        settings = replace(atomic.settings, fresh_context="disabled")  # it never asks the memory itself
        return await atomic.eval(Env(dict(args), outer=run.global_env), ctx.at("memory"), args, settings)

    # ---------------------------------------------------------------- reading

    def read_matches(self, result: AssociativeMatchResult, allow_read: tuple[str, ...] = ()) -> MemoryContext:
        """The matched files' contents for a prompt, read through the one reader and confined."""
        from taskdsl.project.workspace import read_source

        blocks, read, refused = [], [], list(result.refused)
        for path, _ in result.matches:
            full = os.path.join(self.root or "", path)
            why = index_file.outside_reason(path, self.root) if self.root else "no project"
            why = why or confine.read_refusal(full, self.root, allow_read)
            if why is None:
                try:
                    source = read_source(os.path.realpath(full), root=self.root, allowed=allow_read)
                except OSError as error:
                    why = f"'{path}' cannot be read: {error.strerror}"
                else:
                    if source.refused:
                        why = f"'{path}': {source.problem[1]}"
            if why is not None:
                refused.append({"path": path, "reason": why})
                continue
            text = source.text if len(source.text) <= MAX_FILE_CHARS else source.text[:MAX_FILE_CHARS] + "\n…"
            blocks.append(f'<file path="{escape(path, {chr(34): "&quot;"})}">\n{text}\n</file>')
            read.append(path)
        text = "\n".join(p for p in (result.context, *blocks) if p)
        notes = {"matcher": result.matcher, "index": self.shown_path(), "matches": [p for p, _ in result.matches]}
        if refused:
            notes["refused"] = refused
        if not self.exists:
            notes["note"] = "the project has no memory index: write one with `taskdsl memory index`"
        return MemoryContext(text, read, notes, result.usage)

    def shown_path(self) -> str | None:
        if not self.index_path:
            return None
        return index_file.relative(self.index_path, self.root) if self.root else self.index_path


ECHO_MODEL = "taskdsl/echo"


def matcher_refusal(model: str) -> str | None:
    """Why the model matcher cannot match with this model (None: it can). taskdsl/echo answers
    with its prompt, never a list of paths: every fresh-context task would fail on its answer."""
    if model != ECHO_MODEL:
        return None
    return (f'[memory] matcher = "model" in taskdsl.toml asks a model to choose the files, but the model '
            f"{ECHO_MODEL} repeats its prompt and cannot answer a list of paths: run with a model (--model "
            'gpt-4o-mini, say), name one in the <model> of the associative_matching template, or set [memory] '
            'matcher = "local"')


def refuse_echo_matcher(memory: MemorySystem, library, model_override: str | None, default_model: str) -> None:
    """Before a run calls anything: refuse a model matcher that would run with taskdsl/echo, when
    there is an index for it to match (ask refuses echo the same way). The matcher's model is the
    associative_matching task's in `library` under the run's --model (`model_override`) and
    configured model (`default_model`)."""
    if memory.matcher != "model" or not memory.get_global_index():
        return
    refuse_matcher_model(matcher_task(library).model_given(model_override, default_model))


def refuse_matcher_model(model: str) -> None:
    from taskdsl.evaluator.results import TaskError

    why = matcher_refusal(model)
    if why is not None:
        raise TaskError("VALIDATION_ERROR", why, "memory_matcher", {"model": model, "setting": "memory.matcher"})


class FilesRead(list):
    """The paths a task's file_paths read, and what its fresh context took from the memory
    (`memory`: a MemoryContext, None when fresh_context is disabled)."""
    memory: MemoryContext | None = None


async def fresh_context(ctx, task_text: str) -> MemoryContext:
    """SPEC §4: what fresh_context=enabled adds to a task: the memory system is asked with the
    ADR's structured request (the accumulated outputs, the inherited context, the task text) and
    the matched files are read (confined)."""
    memory = ctx.run.memory
    request = ContextGenerationInput(task_text, ctx.accumulated, ctx.inherited or None)
    found = await memory.get_relevant_context_for(request, ctx)
    return memory.read_matches(found, ctx.run.allow_read)


def _json_or_none(text: str) -> Any:
    from taskdsl.evaluator.outputs import strip_code_fences

    try:
        return jsontext.loads(strip_code_fences(text))
    except (json.JSONDecodeError, TypeError):
        return None


def matcher_task(library):
    """The atomic task of the associative_matching template in a run's library (its
    `taskLibrary`): the project's (a task or template with the type:subtype key
    atomic:associative_matching), else the built-in one."""
    from taskdsl.evaluator.results import TaskError

    index = getattr(library, "index", None)
    path, name = str(BUILTIN_MATCHER), "associative_matching"
    if index is not None:
        found = [d for d in index.definitions(MATCHER_KEY) if d.path
                 and os.path.abspath(d.path) != os.path.abspath(BUILTIN_MATCHER)]
        if len(found) == 1:
            path, name = found[0].path, found[0].name
        elif len(found) > 1:
            raise TaskError("VALIDATION_ERROR", f"{len(found)} tasks of the project have the key {MATCHER_KEY} "
                            f"({', '.join(sorted(d.name for d in found))}): keep one", "memory_matcher")
    # the run's library compiles it (evaluator.compiler.atomic_of): the memory never imports the
    # compiler, which builds the nodes that ask the memory
    return library.load_atomic(path, name, "the associative_matching template", "memory_matcher")
