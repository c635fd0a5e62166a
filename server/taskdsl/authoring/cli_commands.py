"""The authoring subcommands of `taskdsl`, registered by cli.py in one call."""

from __future__ import annotations


def add_parsers(commands, checking) -> None:
    """`checking`: the cli module, whose discovery and per-file check `taskdsl test` uses (passed
    in, not imported: cli imports this module)."""
    from taskdsl.authoring.graph_cli import add_graph_parser
    from taskdsl.authoring.render_cli import add_render_parser
    from taskdsl.authoring.test_cli import add_test_parser

    add_test_parser(commands, checking)
    add_render_parser(commands)
    add_graph_parser(commands)
