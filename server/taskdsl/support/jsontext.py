"""The one reader of JSON text taskdsl did not write itself: model answers, script output, replay
fixtures, `--inputs`, a batch's rows and results, cache entries, the memory index, messages of the
editor and the debugger. Python's decoder recurses per nested array or object and raises
RecursionError past about a thousand levels, which is not a ValueError: a hostile answer of
`[[[…]]]` ended `taskdsl run` and `taskdsl test` with a traceback. Here it is invalid JSON like any
other (json.JSONDecodeError, a ValueError), so every caller's "not valid JSON" path takes it.
Nesting under the decoder's own limit was still too deep for what comes after it (a cond test's
comparison, the server's encoder of an answer: each more than one frame a level), so a value nested
more than MAX_DEPTH levels is refused the same way: every consumer can then recurse freely.
`tests/security/test_one_json_reader.py` holds every other module to it."""

from __future__ import annotations

import json
from typing import Any


MAX_DEPTH = 200  # arrays or objects inside each other; far past any real answer, well under Python's stack


def loads(text: str | bytes | bytearray) -> Any:
    """json.loads, with nesting deeper than MAX_DEPTH refused as invalid JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        opened = text.count("[") + text.count("{") if isinstance(text, str) else \
            text.count(b"[") + text.count(b"{")
        if opened <= MAX_DEPTH or depth(value) <= MAX_DEPTH:
            return value
    shown = text if isinstance(text, str) else bytes(text).decode("utf-8", errors="replace")
    raise json.JSONDecodeError(f"nested too deeply (arrays or objects inside each other more than {MAX_DEPTH} "
                               "levels)", shown, 0) from None


def depth(value: Any) -> int:
    "How many arrays or objects sit inside each other in value (a loop, not a recursion)."
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((item, level + 1) for item in (value.values() if isinstance(value, dict) else value))
    return deepest
