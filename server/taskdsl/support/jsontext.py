"""The one reader of JSON text taskdsl did not write itself: model answers, script output, replay
fixtures, `--inputs`, a batch's rows and results, cache entries, the memory index, messages of the
editor and the debugger. Python's decoder recurses per nested array or object and raises
RecursionError past about a thousand levels, which is not a ValueError: a hostile answer of
`[[[…]]]` ended `taskdsl run` and `taskdsl test` with a traceback. Here it is invalid JSON like any
other (json.JSONDecodeError, a ValueError), so every caller's "not valid JSON" path takes it.
`tests/security/test_one_json_reader.py` holds every other module to it."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes | bytearray) -> Any:
    """json.loads, with nesting too deep for the decoder refused as invalid JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        shown = text if isinstance(text, str) else bytes(text).decode("utf-8", errors="replace")
        raise json.JSONDecodeError("nested too deeply (arrays or objects inside each other more than about "
                                   "a thousand levels)", shown, 0) from None
