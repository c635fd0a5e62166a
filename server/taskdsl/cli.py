"""The command line: `taskdsl check|rules|schema|run|serve` (SPEC §9).

Importing this module stays cheap: the checker, the evaluator and the language server are
imported only by the subcommand that needs them (never litellm or pygls for `check`).

Exit codes of `check`: 0 no errors (warnings allowed), 1 at least one error, 2 a usage problem
(a path that does not exist or cannot be read, a folder without templates, a bad option).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


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
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default text)")
    check.add_argument("--fix", action="store_true", help="apply the safe quick fixes in place, then report what remains")
    check.set_defaults(func=check_command)

    rules = commands.add_parser("rules", help="list the diagnostic codes, or show one code's documentation")
    rules.add_argument("code", nargs="?", help="a code such as TD101")
    rules.set_defaults(func=rules_command)

    schema_ = commands.add_parser("schema", help="print the path of the installed task.xsd")
    schema_.set_defaults(func=schema_command)

    run = _run_parser(commands) if wants_run else None
    if run is None:
        stub = commands.add_parser("run", help="run a template (see `taskdsl run --help`)", add_help=False)
        stub.set_defaults(func=lambda _args: _unavailable("run"))

    from taskdsl.authoring import cli_commands  # test, render, graph

    cli_commands.add_parsers(commands)

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
        from taskdsl import run_cli
    except ImportError:
        return None
    return run_cli.add_run_parser(commands)


def _unavailable(what: str, why: str = "") -> int:
    because = f": {why}" if why else ""
    print(f"taskdsl: error: `taskdsl {what}` is not available in this installation{because}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- check: files


@dataclass
class Report:
    """What one `check` run found, for every output format."""

    results: list = field(default_factory=list)  # (Source, Document, [Diagnostic])
    fixed: list = field(default_factory=list)  # (path, line, col, code, title)
    usage_errors: list[str] = field(default_factory=list)
    files_checked: int = 0


@dataclass
class Targets:
    """What `check PATH…` checks (files: explicit ones as given, folders' templates) and what it
    indexes to resolve references: the project of every path, as `taskdsl run` does."""

    files: list[str] = field(default_factory=list)
    found: object = None  # workspace.Discovered
    folders: list[str] = field(default_factory=list)  # the project roots


def collect_files(paths: list[str], settings, report: Report) -> Targets:
    """Explicit files as given; folders: the templates discovery finds in them. Each path's
    project (its root folder) is discovered as a whole, so references resolve across it."""
    from taskdsl import workspace

    given: list[tuple[str, Path]] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            report.usage_errors.append(f"{raw}: no such file or directory")
        elif not path.is_dir() and not path.is_file():
            report.usage_errors.append(f"{raw}: not a regular file")
        else:
            given.append((raw, path))
    roots = list(dict.fromkeys(workspace.project_root(path) for _, path in given))
    explicit = [os.path.abspath(path) for _, path in given if path.is_file()]
    targets = Targets(folders=roots)
    targets.found = workspace.discover(roots + explicit, settings)
    files: list[str] = []
    for raw, path in given:
        if path.is_file():
            files.append(raw)
            continue
        folder = os.path.abspath(path)
        inside = [f for f in targets.found.project_files if f.startswith(folder.rstrip(os.sep) + os.sep)]
        if not inside:
            globs = ", ".join(settings.files)
            report.usage_errors.append(f"{raw}: no templates ({globs}) in this folder")
        files.extend(os.path.relpath(f) if not os.path.isabs(raw) else f for f in inside)
    targets.files = list(dict.fromkeys(os.path.normpath(f) for f in files))
    return targets


def read_source(path: str):
    """Read a file as a template (the one reader): bad bytes become a TD001, never an exception."""
    from taskdsl.workspace import read_source as read

    return read(path)


# --------------------------------------------------------------------------- check: checking


def check_command(args) -> int:
    from taskdsl.workspace import project_settings

    report = Report()
    settings = project_settings()
    targets = collect_files(args.paths, settings, report)
    library = build_library(targets, settings)
    for path in targets.files:
        try:
            source = read_source(path)
        except OSError as error:
            report.usage_errors.append(f"{path}: cannot read: {error.strerror or error}")
            continue
        if args.fix and not source.refused and source.problem is None:
            fix_source(source, library, settings, report)
        document, diagnostics = check_source(source, library, settings)
        report.results.append((source, document, diagnostics))
        report.files_checked += 1
    write_report(report, args.format, sys.stdout, sys.stderr)
    if report.usage_errors:
        return 2
    return 1 if any(d.is_error for _, _, ds in report.results for d in ds) else 0


def build_library(targets: Targets, settings):
    """The index of the checked files' projects (and the library paths), so refs resolve across
    them exactly as a run resolves them. None when it cannot be built (refs are then unresolved)."""
    from taskdsl.library import Library

    try:
        # the parsed documents are kept: each file is parsed once, for the index and the check
        return Library.from_discovered(targets.found, settings, targets.folders, keep_documents=True)
    except Exception as error:  # a broken index must not stop the check of each file
        print(f"taskdsl: warning: the task library could not be built ({error}); references are not resolved", file=sys.stderr)
        return None


def check_source(source, library, settings):
    """(Document, diagnostics) of one file, with the reading problems in front."""
    from taskdsl.checker import check_document
    from taskdsl.diagnostics import Diagnostic, Severity
    from taskdsl.document import Span, parse

    if source.refused:
        offset, message = source.problem
        return parse(""), [Diagnostic("TD001", Severity.ERROR, Span(0, 0), message)]
    path = os.path.abspath(source.path)
    indexed = library.take_document(path, source.text) if library is not None else None
    result = check_document(indexed or parse(source.text), path=path, library=library, settings=settings)
    diagnostics = list(result.diagnostics)
    if source.problem is not None:
        offset, message = source.problem
        message += "; the undecodable bytes are shown as U+FFFD"
        diagnostics.append(Diagnostic("TD001", Severity.ERROR, Span(offset, min(offset + 1, len(source.text))), message))
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return result.document, diagnostics


def fix_source(source, library, settings, report: Report) -> None:
    """`--fix`: the fixer's safe fixes, written back only when the file changed."""
    from taskdsl.fixer import fix_text
    from taskdsl.workspace import write_source

    fixed = fix_text(source.text, path=os.path.abspath(source.path), library=library, settings=settings)
    for applied in fixed.applied:
        report.fixed.append((source.path, applied.line + 1, applied.column + 1, applied.diagnostic.code,
                             applied.fix.title))
    if fixed.text != source.text:
        write_source(source, fixed.text)
        source.text = fixed.text
        if library is not None:  # the file's index entry follows its new text
            library.update_file(os.path.abspath(source.path), fixed.text)


# --------------------------------------------------------------------------- check: output


def write_report(report: Report, fmt: str, out, err) -> None:
    info_stream = out if fmt == "text" else err
    for path, line, col, code, title in report.fixed:
        print(f"{path}:{line}:{col}: fixed {code} {title}", file=info_stream)
    if fmt == "json":
        json.dump(json_report(report), out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif fmt == "sarif":
        json.dump(sarif_report(report), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        for source, document, diagnostics in report.results:
            for diagnostic in diagnostics:
                line, col = document.position(diagnostic.span.start)
                print(f"{source.path}:{line + 1}:{col + 1}: {diagnostic.severity.value} {diagnostic.code} {diagnostic.message}", file=out)
    for problem in report.usage_errors:
        print(f"taskdsl: error: {problem}", file=err)
    print(summary(report), file=err)


def summary(report: Report) -> str:
    counts: dict[str, int] = {}
    for _, _, diagnostics in report.results:
        for diagnostic in diagnostics:
            counts[diagnostic.severity.value] = counts.get(diagnostic.severity.value, 0) + 1
    files = report.files_checked
    parts = [_plural(counts.get("error", 0), "error"), _plural(counts.get("warning", 0), "warning")]
    parts += [_plural(counts[kind], kind) for kind in ("info", "hint") if counts.get(kind)]
    line = f"{', '.join(parts)} in {_plural(files, 'file')}"
    if report.fixed:
        line += f"; {_plural(len(report.fixed), 'fix', 'fixes')} applied"
    return line


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _range(document, span) -> dict:
    start_line, start_col = document.position(span.start)
    end_line, end_col = document.position(span.end)
    return {"line": start_line + 1, "column": start_col + 1, "endLine": end_line + 1, "endColumn": end_col + 1}


def _related_json(source, document, related) -> dict:
    entry = {"message": related.message, "path": related.path or source.path}
    if related.span is not None and related.path is None:
        entry.update(_range(document, related.span))
    elif related.range is not None:
        (line, col), (end_line, end_col) = related.range
        entry.update({"line": line + 1, "column": col + 1, "endLine": end_line + 1, "endColumn": end_col + 1})
    return entry


def json_report(report: Report) -> list[dict]:
    entries = []
    for source, document, diagnostics in report.results:
        for diagnostic in diagnostics:
            entry = {"path": source.path, **_range(document, diagnostic.span),
                     "severity": diagnostic.severity.value, "code": diagnostic.code, "message": diagnostic.message,
                     "related": [_related_json(source, document, r) for r in diagnostic.related],
                     "fixes": [{"title": fix.title, "safe": fix.safe,
                                "edits": [{**_range(document, edit.span), "newText": edit.new_text} for edit in fix.edits]}
                               for fix in diagnostic.fixes]}
            entries.append(entry)
    return entries


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def _sarif_region(document, span) -> dict:
    r = _range(document, span)
    return {"startLine": r["line"], "startColumn": r["column"], "endLine": r["endLine"], "endColumn": r["endColumn"]}


def _artifact(path: str) -> dict:
    candidate = Path(path)
    return {"uri": candidate.as_uri() if candidate.is_absolute() else candidate.as_posix()}


def sarif_report(report: Report) -> dict:
    from taskdsl import __version__
    from taskdsl.rules import RULES

    codes = sorted(RULES)
    index = {code: i for i, code in enumerate(codes)}
    rules = [{
        "id": code,
        "name": RULES[code].title,
        "shortDescription": {"text": RULES[code].title},
        "fullDescription": {"text": RULES[code].what},
        "help": {"text": RULES[code].doc()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[code].severity.value]},
    } for code in codes]
    results = []
    for source, document, diagnostics in report.results:
        for diagnostic in diagnostics:
            result = {
                "ruleId": diagnostic.code,
                "level": _SARIF_LEVEL[diagnostic.severity.value],
                "message": {"text": diagnostic.message},
                "locations": [{"physicalLocation": {"artifactLocation": _artifact(source.path),
                                                    "region": _sarif_region(document, diagnostic.span)}}],
            }
            if diagnostic.code in index:
                result["ruleIndex"] = index[diagnostic.code]
            related = [r for r in diagnostic.related if r.span is not None or r.range is not None]
            if related:
                result["relatedLocations"] = [_sarif_related(source, document, i, r) for i, r in enumerate(related)]
            if diagnostic.fixes:
                result["fixes"] = [{
                    "description": {"text": fix.title},
                    "artifactChanges": [{"artifactLocation": _artifact(source.path), "replacements": [
                        {"deletedRegion": _sarif_region(document, edit.span), "insertedContent": {"text": edit.new_text}}
                        for edit in fix.edits]}],
                } for fix in diagnostic.fixes]
            results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "taskdsl", "version": __version__,
                                "informationUri": "https://github.com/taskdsl/taskdsl", "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _sarif_related(source, document, number: int, related) -> dict:
    if related.path is None and related.span is not None:
        region = _sarif_region(document, related.span)
        location = _artifact(source.path)
    else:
        (line, col), (end_line, end_col) = related.range
        region = {"startLine": line + 1, "startColumn": col + 1, "endLine": end_line + 1, "endColumn": end_col + 1}
        location = _artifact(related.path or source.path)
    return {"id": number, "message": {"text": related.message},
            "physicalLocation": {"artifactLocation": location, "region": region}}


# --------------------------------------------------------------------------- rules, schema, serve


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
    from taskdsl import schema

    path = schema.xsd_path()
    if not path.is_file():
        print(f"taskdsl: error: the grammar is missing from this installation (looked at {path})", file=sys.stderr)
        return 2
    print(path)
    return 0


def serve_command(args) -> int:
    """Delegate to the language server module (pygls is imported only here)."""
    try:
        from taskdsl import server
    except ImportError as error:
        return _unavailable("serve", str(error))
    for entry in ("main", "serve", "start"):
        function = getattr(server, entry, None)
        if callable(function):
            result = function(args)
            return int(result or 0)
    return _unavailable("serve")
