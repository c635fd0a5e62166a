"""`taskdsl debug`: the Debug Adapter Protocol server over stdio (taskdsl.lsp.debug).

Editors start it themselves (VS Code's `taskdsl` debugger, nvim-dap); it reads DAP messages on
stdin and writes them on stdout. Exit 0 when the client disconnects, 2 on a malformed message.
`taskdsl debug --plan` reads a launch configuration on stdin and prints the plan it would run
(what the editor shows before it asks the user to agree), running nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from taskdsl.support import jsontext


def add_debug_parser(commands) -> argparse.ArgumentParser:
    p = commands.add_parser("debug", help="start the debug adapter (Debug Adapter Protocol over stdio)",
                            description="Start the Debug Adapter Protocol server over stdin/stdout. An editor "
                                        "launches it with a configuration naming the template (program), the "
                                        "task, the inputs and the model; see the debugging page of the docs.")
    p.add_argument("--plan", action="store_true",
                   help="read a launch configuration (JSON) on stdin, print what it would run as JSON "
                        "(reasons to agree, the plan, its digest) and run nothing")
    p.set_defaults(func=debug_command)
    return p


def debug_command(args) -> int:
    from taskdsl.cli.info import unavailable

    try:
        from taskdsl.lsp.debug import plan_answer, serve_stdio
    except ImportError as error:
        return unavailable("debug", str(error))
    if not args.plan:
        return serve_stdio()
    try:
        launch = jsontext.loads(sys.stdin.read())
    except json.JSONDecodeError as error:
        print(f"taskdsl debug --plan: the launch configuration on stdin is not JSON: {error}", file=sys.stderr)
        return 2
    if not isinstance(launch, dict):
        print("taskdsl debug --plan: the launch configuration must be a JSON object", file=sys.stderr)
        return 2
    answer = plan_answer(launch)
    print(json.dumps(answer, ensure_ascii=False))
    return 1 if "error" in answer else 0
