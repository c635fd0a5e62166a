"""Which library templates fit a request in plain words: `taskdsl match`, `taskdsl ask`, the
server command `taskdsl.matchTasks` and `TaskLibrary.find_matching_tasks` all rank here.

Local and offline: each definition's name (split at `_ . -`), description, criteria and
instructions are one document of words, reduced to their stems (snowballstemmer, English) with
common words dropped, and ranked against the request with BM25 (rank_bm25's BM25Plus, whose
term weights stay positive even in a library of one template).

The score is the BM25 relevance divided by the relevance of a template in which every word of
the request occurs once (at the library's average length): 1.0 means the template covers the
whole request, 0.5 half of its weight, 0 none of it; it is capped at 1.0. A request word that no
template contains counts with the weight of the rarest word, so an unknown word lowers every
score. Only definitions that share at least one word with the request are returned. Of equal
scores, a definition named exactly as the request comes first, then the names in order.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable

from taskdsl.support.words import STOP_WORDS, tokens  # noqa: F401 (STOP_WORDS: imported from here by others)
from taskdsl.support.words import bm25 as _bm25, weight as _weight

DEFAULT_LIMIT = 5  # the seeds: "up to 5 highest-scoring templates"
MAX_REQUEST_CHARS = 10_000  # a request longer than this is cut (ranking needs its words, not a book)
KINDS = {"reparse": "reparse", "memory": "memory", "associative_matching": "memory"}  # subtype → kind; else standard


@dataclass(frozen=True, slots=True)
class Match:
    definition: object  # taskdsl.library.Definition
    score: float
    kind: str  # standard | reparse | memory

    def __iter__(self):  # (definition, score, kind), as the seeds' findMatchingTasks returns
        return iter((self.definition, self.score, self.kind))

    def to_json(self) -> dict:
        definition = self.definition
        line = definition.range[0][0] + 1 if getattr(definition, "range", None) else None
        return {"name": definition.name, "score": round(self.score, 3), "kind": self.kind,
                "path": definition.path, "line": line, "description": getattr(definition, "description", None)}


def kind_of(definition) -> str:
    return KINDS.get((definition.subtype or "").strip().lower(), "standard")




def definition_text(definition) -> str:
    name_words = re.sub(r"[_.\-:]+", " ", definition.name or "")
    parts = (name_words, definition.description, getattr(definition, "criteria", None),
             getattr(definition, "instructions", None))
    return "\n".join(part for part in parts if part)


def find_matching_tasks(library, text: str, limit: int = DEFAULT_LIMIT,
                        definitions: Iterable | None = None) -> list[Match]:
    """The definitions of `library` (a taskdsl.library.Library, or any given `definitions`)
    ranked by relevance to `text`, best first, at most `limit`."""
    candidates = list(definitions if definitions is not None else library.all_definitions())
    query = list(dict.fromkeys(tokens(text[:MAX_REQUEST_CHARS])))
    if not candidates or not query or limit <= 0:
        return []
    corpus = [tokens(definition_text(d)) for d in candidates]
    if not any(corpus):
        return []
    bm25 = _bm25(corpus)
    reference = sum(_weight(bm25, word) for word in query)
    scores = bm25.get_scores(query)
    ranked = []
    for definition, words, raw in zip(candidates, corpus, scores):
        if not set(query) & set(words):
            continue
        ranked.append(Match(definition, min(1.0, float(raw) / reference), kind_of(definition)))
    named = _spelled(text)
    ranked.sort(key=lambda m: (-m.score, _spelled(m.definition.name or "") != named, m.definition.name,
                               m.definition.path or ""))
    return ranked[:limit]


def _spelled(text: str) -> str:
    "A name or request as words (`_ . - :` as spaces, lower case): a template named as the request wins a tie."
    return " ".join(re.sub(r"[_.\-:]+", " ", text).lower().split())


def find_in_task_library(task_library, text: str, limit: int = DEFAULT_LIMIT) -> list[tuple]:
    """The evaluator's runtime TaskLibrary, ranked the same way: its definitions' files are read
    by the workspace index (which keeps description, criteria and instructions), and each match
    is given back as the runtime TaskDefinition of that name: (TaskDefinition, score, kind)."""
    from taskdsl.library import Library

    paths = sorted({d.metadata.get("path") for d in task_library.by_name.values() if d.metadata.get("path")})
    index = Library.from_paths([p for p in paths if os.path.isfile(p)])
    runtime = task_library.by_name
    indexed = [d for d in index.all_definitions() if runtime.get(d.name) is not None
               and _same_file(runtime[d.name].metadata.get("path"), d.path)]
    return [(runtime[m.definition.name], m.score, m.kind)
            for m in find_matching_tasks(index, text, limit, definitions=indexed)]


def _same_file(a: str | None, b: str | None) -> bool:
    return bool(a and b) and os.path.abspath(a) == os.path.abspath(b)
