"""Words as the project's matchers compare them: the words of a text that carry meaning, reduced to
their stems (snowballstemmer, English), and a BM25 index over documents of such words (rank_bm25's
BM25Plus). Shared by the template matcher (taskdsl.task_system.matching) and the memory system's
local matcher (taskdsl.evaluator.memory): one idea of what a word is.
"""

from __future__ import annotations

import math
import re

# Words that say nothing about what a task does. Short on purpose: "count", "file" or "text"
# are not here, they are what a request is about.
STOP_WORDS = frozenset("""
a an and are as at be by do does for from how i in into is it its me my of on or our please so
that the their them then these this those to up us we what when which who will with would you
your can could should task template want need make let give get
""".split())

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_STEMMER: list = []


def tokens(text: str) -> list[str]:
    """The stems of the words of a text that carry meaning."""
    words = [w for w in _WORD_RE.findall(text.lower()) if w not in STOP_WORDS]
    return _stemmer().stemWords(words)


def bm25(corpus: list[list[str]]):
    """A BM25 index over documents of stems."""
    from rank_bm25 import BM25Plus

    # delta=0: a document without a word of the request gets nothing for it (BM25Plus's floor
    # would give every document a share of every word); the positive idf is what we keep
    return BM25Plus([words or [""] for words in corpus], delta=0)


def weight(index, word: str) -> float:
    """What one occurrence of `word` adds in a document of average length: its idf (BM25's
    term-frequency factor is 1 there); a word no document has weighs as much as the rarest."""
    if word in index.idf:
        return index.idf[word]
    return math.log(index.corpus_size + 1)


def _stemmer():
    if not _STEMMER:
        import snowballstemmer

        _STEMMER.append(snowballstemmer.stemmer("english"))
    return _STEMMER[0]
