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
        print(f"taskdsl: error: unknown rule code '{args.code}'{_code_hint(code, sorted(RULES))}", file=sys.stderr)
        return 2
    print(RULES[code].doc(), end="")
    return 0


def _code_hint(code: str, known: list[str]) -> str:
    """What to say after an unknown rule code: for a well-formed code (TD999), a known code with the
    same digits in another order (a transposition), else the codes of its hundred (TD901–TD908);
    for anything else, the codes it starts, else the closest spellings."""
    import difflib
    import re

    if re.fullmatch(r"TD\d{3}", code):
        swapped = [k for k in known if sorted(k) == sorted(code)]
        if swapped:
            return f"; did you mean {' or '.join(swapped)}?"
        family = [k for k in known if k[:3] == code[:3]]
        if len(family) == 1:
            return f"; the only {code[:3]}xx code is {family[0]} (`taskdsl rules` lists every code)"
        if family:
            return f"; the {code[:3]}xx codes are {family[0]}–{family[-1]} (`taskdsl rules` lists every code)"
        return "; `taskdsl rules` lists every code"
    close = [k for k in known if k.startswith(code)][:3] or difflib.get_close_matches(code, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else "; `taskdsl rules` lists them"


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
