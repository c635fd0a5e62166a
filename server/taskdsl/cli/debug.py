"""`taskdsl debug`: the Debug Adapter Protocol server over stdio (taskdsl.lsp.debug).

Editors start it themselves (VS Code's `taskdsl` debugger, nvim-dap); it reads DAP messages on
stdin and writes them on stdout. Exit 0 when the client disconnects, 2 on a malformed message.
"""

from __future__ import annotations

import argparse


def add_debug_parser(commands) -> argparse.ArgumentParser:
    p = commands.add_parser("debug", help="start the debug adapter (Debug Adapter Protocol over stdio)",
                            description="Start the Debug Adapter Protocol server over stdin/stdout. An editor "
                                        "launches it with a configuration naming the template (program), the "
                                        "task, the inputs and the model; see the debugging page of the docs.")
    p.set_defaults(func=debug_command)
    return p


def debug_command(args) -> int:
    from taskdsl.cli.info import unavailable

    try:
        from taskdsl.lsp.debug import serve_stdio
    except ImportError as error:
        return unavailable("debug", str(error))
    return serve_stdio()
