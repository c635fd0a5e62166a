"""`taskdsl cache info|clear [PATH]`: the answer cache of the project holding PATH (default: here).

    info   where the project's cached answers are, how many, how large
    clear  remove them (the next run calls the models again)
"""

from __future__ import annotations

import sys


def add_cache_parser(commands) -> None:
    p = commands.add_parser("cache", help="show or clear the project's cached model answers",
                            description="The answer cache of the project holding PATH (default: the current folder).")
    p.add_argument("action", choices=("info", "clear"), help="info: where and how much; clear: remove every answer")
    p.add_argument("path", nargs="?", default=".", help="a file or folder of the project (default: .)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cache_command)


def cache_command(args) -> int:
    import json
    import os

    from taskdsl.evaluator import cache
    from taskdsl.project.config import project_root

    if not os.path.exists(args.path):
        print(f"taskdsl cache: {args.path}: no such file or folder", file=sys.stderr)
        return 2
    root = str(project_root(args.path))
    if args.action == "clear":
        removed = cache.clear(root)
        print(json.dumps({"project": root, "removed": removed}) if args.json
              else f"removed {removed} cached answer{'s' if removed != 1 else ''} of {root}")
        return 0
    found = cache.info(root)
    if args.json:
        print(json.dumps({"project": root, "folder": found.folder, "entries": found.entries, "bytes": found.size}))
    else:
        print(f"project: {root}\nfolder:  {found.folder}\nanswers: {found.entries} ({found.size:,} bytes)")
    return 0
