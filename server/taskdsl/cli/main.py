"""The command line's entry point: `taskdsl COMMAND …` (SPEC §9). `build_parser` registers one
module per command (check, run, test, render, graph, match/ask, rules, schema, serve).

Importing this module stays cheap: the checker, the evaluator and the language server are
imported only by the subcommand that needs them (never litellm or pygls for `check`).
"""

from __future__ import annotations

import argparse
import sys

from taskdsl.cli import check as checking
from taskdsl.cli.check import FORMATS, check_command
from taskdsl.cli.info import rules_command, schema_command, serve_command, unavailable

# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(wants_run=_command_of(argv) == "run")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits 2 on usage errors, 0 on --help
        return int(exit_.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `taskdsl check … | head`
        return 0


def _command_of(argv: list[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(wants_run: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taskdsl", description="Checker, task runner and language server for taskdsl XML task templates.")
    commands = parser.add_subparsers(metavar="COMMAND")

    check = commands.add_parser("check", help="check templates and folders of templates",
                                description="Check templates: well-formedness, the grammar and the rules. "
                                            "Folders are searched for *.task.xml; files named explicitly are checked whatever their name.")
    check.add_argument("paths", nargs="+", metavar="PATH", help="template files or folders")
    check.add_argument("--format", choices=FORMATS, default="text",
                       help="output format (default text; github: GitHub Actions annotations; junit: JUnit XML)")
    check.add_argument("--fix", action="store_true", help="apply the safe quick fixes in place, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix, apply the unsafe quick fixes too (a guessed name, an added empty argument)")
    check.add_argument("--jobs", "-j", type=checking.jobs, default=None, metavar="N",
                       help="check with N processes (default: one per core; 1: in this process; --fix: always 1)")
    check.set_defaults(func=check_command)

    rules = commands.add_parser("rules", help="list the diagnostic codes, or show one code's documentation")
    rules.add_argument("code", nargs="?", help="a code such as TD101")
    rules.set_defaults(func=rules_command)

    schema_ = commands.add_parser("schema", help="print the path of the installed task.xsd")
    schema_.set_defaults(func=schema_command)

    run = _run_parser(commands) if wants_run else None
    if run is None:
        stub = commands.add_parser("run", help="run a template (see `taskdsl run --help`)", add_help=False)
        stub.set_defaults(func=lambda _args: unavailable("run"))

    from taskdsl.cli import ask, cache, graph, render, test  # cheap to import (their work imports on use)

    ask.add_parsers(commands)  # match, ask
    test.add_test_parser(commands, checking=checking)  # `test` finds and checks files as `check` does
    render.add_render_parser(commands)
    graph.add_graph_parser(commands)
    cache.add_cache_parser(commands)

    serve = commands.add_parser("serve", help="start the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="[HOST:]PORT", type=host_port,
                           help="listen on a TCP socket (127.0.0.1 unless a host is given; clients need the token "
                                "printed at start, or TASKDSL_SERVER_TOKEN)")
    transport.add_argument("--ws", metavar="[HOST:]PORT", type=host_port, help="listen on a WebSocket (as --tcp)")
    serve.add_argument("--log-level", default="WARNING", type=str.upper, choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                       help="log level (logs go to stderr)")
    serve.set_defaults(func=serve_command)
    return parser


def host_port(value: str) -> str:
    """HOST:PORT with a port number (HOST is 127.0.0.1 when only PORT or ':PORT' is given; 0 = any free port)."""
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT with a port from 1 to 65535 (0: any free port), "
                                         f"got {value!r}")
    return f"{host or '127.0.0.1'}:{port}"


def _run_parser(commands):
    """`taskdsl run` is defined by the evaluator's run_cli (imported only when it is asked for)."""
    try:
        from taskdsl.cli import run as run_cli
    except ImportError:
        return None
    return run_cli.add_run_parser(commands)
