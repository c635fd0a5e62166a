"""`taskdsl rules [CODE]`, `taskdsl schema` and `taskdsl serve`: what ships with taskdsl, and the
language server's start."""

from __future__ import annotations

import sys



def rules_command(args) -> int:
    import difflib

    from taskdsl.rules import RULES

    if not args.code:
        for code in sorted(RULES):
            rule = RULES[code]
            print(f"{code}  {rule.severity.value:<8} {rule.title}")
        return 0
    code = args.code.strip().upper()
    if code not in RULES:
        starting = [known for known in sorted(RULES) if known.startswith(code)][:3]
        close = starting or difflib.get_close_matches(code, sorted(RULES), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; `taskdsl rules` lists them"
        print(f"taskdsl: error: unknown rule code '{args.code}'{hint}", file=sys.stderr)
        return 2
    print(RULES[code].doc(), end="")
    return 0


def schema_command(_args) -> int:
    from taskdsl.language import schema

    path = schema.xsd_path()
    if not path.is_file():
        print(f"taskdsl: error: the grammar is missing from this installation (looked at {path})", file=sys.stderr)
        return 2
    print(path)
    return 0


def serve_command(args) -> int:
    """Start the language server (pygls is imported only here). Importing `taskdsl.lsp.server`
    imports the `taskdsl.lsp` package first, which registers every handler."""
    try:
        from taskdsl.lsp.server import main
    except ImportError as error:
        return unavailable("serve", str(error))
    return int(main(args) or 0)


def unavailable(what: str, why: str = "") -> int:
    because = f": {why}" if why else ""
    print(f"taskdsl: error: `taskdsl {what}` is not available in this installation{because}", file=sys.stderr)
    return 2
