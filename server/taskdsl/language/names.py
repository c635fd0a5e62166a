"""Names every part derives the same way: a file's task name, a template's param list."""

from __future__ import annotations

import difflib
import os
import re

TEMPLATE_SUFFIXES = (".task.xml", ".xml")
#: one entry of params= (or legacy parameters=): entries are separated by whitespace and/or commas
PARAM_RE = re.compile(r"[^,\s]+")


def file_stem(path: str | None) -> str | None:
    """The name a root task without `name` is registered under: its file name without .task.xml."""
    if not path:
        return None
    base = os.path.basename(path)
    for suffix in TEMPLATE_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base or None


def split_params(value: str | None) -> list[str]:
    """`params="a, b"`, `params="a b"` → ['a', 'b']: whitespace and/or commas separate entries."""
    return PARAM_RE.findall(value or "")


def nearest(word: str, candidates) -> tuple[str | None, bool]:
    """(the nearest candidate to a misspelt word, whether it is surely meant): the schema's
    did-you-mean and the name its quick fix writes. A fix is safe only when a typo has one close
    match, at most two keys away."""
    # 0.75 keeps real typos (descripton, stpes, comand) and drops look-alikes (code → model)
    candidates = list(candidates)
    close = difflib.get_close_matches(word, candidates, n=2, cutoff=0.75)
    # a typo is a slip of one or two keys; `output_slot` → `output_format` is another word
    sure = len(close) == 1 and typo_distance(word, close[0]) <= 2
    if not close and len(word) >= 4:  # a name typed half-way: fresh → fresh_context
        close = [c for c in candidates if c.startswith(word)][:1]
    if not close or close[0] == word:
        return None, False
    return close[0], sure


def typo_distance(a: str, b: str) -> int:
    """Edits from a to b: insertions, deletions, substitutions and swaps of neighbours (ture → true is 1)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def suggest(name: str, candidates: list[str], limit: int = 3) -> list[str]:
    """Did-you-mean: a case-insensitive match first, then the closest spellings."""
    lowered = name.lower()
    exact = [c for c in candidates if c.lower() == lowered and c != name]
    close = difflib.get_close_matches(name, candidates, n=limit + len(exact), cutoff=0.6)
    ordered = exact + [c for c in close if c not in exact and c != name]
    return ordered[:limit]
