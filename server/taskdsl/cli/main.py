"""The command line's entry point: `taskdsl COMMAND …` (SPEC §9). `build_parser` registers one
module per command (check, run, test, render, graph, match/ask, memory, rules, schema, serve).

Importing this module stays cheap: the checker, the evaluator and the language server are
imported only by the subcommand that needs them (never litellm or pygls for `check`).
"""

from __future__ import annotations

import argparse
import difflib
import sys

from taskdsl.cli import check as checking
from taskdsl.cli.check import FORMATS, check_command
from taskdsl.cli.info import rules_command, schema_command, serve_command, unavailable

# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(wants_run=_command_of(argv) == "run")
    try:
        command = _command_of(argv)
        commands = _commands(parser)
        if command is not None and command not in commands:  # argparse lists them; we name the one meant
            near = difflib.get_close_matches(command, list(commands), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else ""
            parser.error(f"unknown command '{command}'{hint}; the commands: {', '.join(commands)}")
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # said by the subcommand's own parser: its usage, and the option meant
            _parser_of(parser, args).error(unrecognized(_parser_of(parser, args), unknown))
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


def _commands(parser: argparse.ArgumentParser) -> dict:
    "The subcommands' parsers by name."
    return next((dict(action.choices) for action in parser._actions if isinstance(action, argparse._SubParsersAction)), {})


def _parser_of(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    "The subcommand's parser the arguments were parsed by (the top one when there was none)."
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, "command", None) in action.choices:
            return action.choices[args.command]
    return parser


def unrecognized(parser: argparse.ArgumentParser, unknown: list[str]) -> str:
    """argparse's message for arguments no option takes, with the option each flag was likely
    meant to be (`--fxi` → `--fix`)."""
    options = [option for action in parser._actions for option in action.option_strings]
    meant = []
    for arg in unknown:
        flag = arg.partition("=")[0]
        near = difflib.get_close_matches(flag, options, n=1, cutoff=0.75) if flag.startswith("-") else []
        if near and near[0] not in meant:
            meant.append(near[0])
    hint = f" (did you mean {', '.join(meant)}?)" if meant else ""
    return f"unrecognized arguments: {' '.join(unknown)}{hint}"


def build_parser(wants_run: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taskdsl", description="Checker, task runner and language server for taskdsl XML task templates.")
    parser.add_argument("--version", action="version", version=f"taskdsl {version()}")
    commands = parser.add_subparsers(metavar="COMMAND", dest="command")

    check = commands.add_parser("check", help="check templates and folders of templates",
                                description="Check templates: well-formedness, the grammar and the rules. "
                                            "Folders are searched for *.task.xml; files named explicitly are checked whatever their name.")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="template files or folders (default: ., the current folder)")
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

    from taskdsl.cli import ask, cache, debug, graph, memory, render, test  # cheap to import (their work imports on use)

    ask.add_parsers(commands)  # match, ask
    test.add_test_parser(commands, checking=checking)  # `test` finds and checks files as `check` does
    render.add_render_parser(commands)
    graph.add_graph_parser(commands)
    memory.add_memory_parser(commands)  # memory index | show | match
    debug.add_debug_parser(commands)
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


def version() -> str:
    "The installed distribution's version (the package's own when it runs from a source tree)."
    from importlib import metadata

    try:
        return metadata.version("taskdsl")
    except metadata.PackageNotFoundError:
        from taskdsl import __version__

        return __version__


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
        from taskdsl.cli import batch, run as run_cli
    except ImportError:
        return None
    parser = run_cli.add_run_parser(commands)
    batch.add_batch_options(parser)  # --data ROWS [--jobs N] [--out F] [--resume] [--fail-fast] [--executor]
    parser.set_defaults(batch_command=batch.batch_command)
    return parser
