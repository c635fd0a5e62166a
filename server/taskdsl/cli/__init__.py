"""Rank 10, cli: how a shell reaches taskdsl — `main` builds the parser, one module per command.
May import: every layer below."""
