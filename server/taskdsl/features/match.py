"""The `taskdsl.matchTasks` command: the library's templates ranked against a request.

    workspace/executeCommand {"command": "taskdsl.matchTasks", "arguments": ["count words", 5]}
    → [{"name": "word_count", "score": 0.87, "kind": "standard", "path": "/…/word_count.task.xml", "line": 3}, …]

The arguments are the request text and, optionally, the most results to return (default 5); an
object {"text": …, "limit": …} works too. The answer is the JSON list `taskdsl match --json`
prints, from the same ranking (taskdsl.task_system.matching).
"""

from __future__ import annotations

import asyncio
from typing import Any

COMMAND = "taskdsl.matchTasks"
MAX_LIMIT = 100


def parse_arguments(args: tuple | list) -> tuple[str, int]:
    """(text, limit) from the command's arguments; ValueError with a message for bad ones."""
    from taskdsl.task_system.matching import DEFAULT_LIMIT

    first = args[0] if args else None
    text, limit = first, args[1] if len(args) > 1 else DEFAULT_LIMIT
    if isinstance(first, dict):
        text, limit = first.get("text"), first.get("limit", DEFAULT_LIMIT)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{COMMAND} needs the request text as its first argument")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"{COMMAND}: limit must be a whole number from 1 to {MAX_LIMIT}")
    return text, limit


def register_match(server) -> None:
    from pygls.exceptions import JsonRpcInvalidParams

    @server.command(COMMAND)
    async def match_tasks(ls, *args: Any):
        from taskdsl.task_system.matching import find_matching_tasks

        try:
            text, limit = parse_arguments(args)
        except ValueError as error:
            raise JsonRpcInvalidParams(str(error)) from None
        library = ls.state.library
        if library is None:
            return []
        # the index is not thread-safe: take its definitions here, rank them off the event loop
        definitions = library.all_definitions()
        loop = asyncio.get_running_loop()
        matches = await loop.run_in_executor(None, lambda: find_matching_tasks(None, text, limit, definitions))
        return [match.to_json() for match in matches]
