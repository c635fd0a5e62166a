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
FORMATS = ("text", "json", "sarif", "github", "junit")


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
    check.add_argument("--jobs", "-j", type=_jobs, default=None, metavar="N",
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
        stub.set_defaults(func=lambda _args: _unavailable("run"))

    from taskdsl import cli_ask  # match, ask: cheap to import (their work imports on use)
    from taskdsl.authoring import cli_commands  # test, render, graph

    cli_ask.add_parsers(commands)
    cli_commands.add_parsers(commands, checking=sys.modules[__name__])  # `test` finds and checks files as `check`

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


def _jobs(value: str) -> int:
    from taskdsl.parallel import positive_jobs

    return positive_jobs(value)


def check_command(args) -> int:
    import functools

    from taskdsl.document import gc_paused
    from taskdsl.parallel import FileCheck, check_paths, default_jobs

    report = Report()
    if args.unsafe_fixes and not args.fix:
        report.usage_errors.append("--unsafe-fixes applies fixes only together with --fix (taskdsl check --fix --unsafe-fixes)")
    with gc_paused():  # bulk work that keeps what it builds (the index, every document)
        settings = project_settings(args.paths, report)
        targets = collect_files(args.paths, settings, report)
        library = build_library(targets, settings)
        jobs = getattr(args, "jobs", None) or default_jobs()
        fix = functools.partial(fix_source, unsafe=args.unsafe_fixes)
        each = FileCheck(read=read_source, check=check_source, fix=fix)
        check_paths(targets.files, library, settings, report, each, jobs=jobs, fix=args.fix)
    write_report(report, args.format, sys.stdout, sys.stderr)
    if report.usage_errors:
        return 2
    return 1 if any(d.is_error for _, _, ds in report.results for d in ds) else 0


def project_settings(paths: list[str], report: Report):
    """The settings of the checked project (its taskdsl.toml or [tool.taskdsl]: the project of the
    first path given); the config file's own problems are reported with the templates'."""
    from taskdsl.config import settings_for
    from taskdsl.document import Document
    from taskdsl.workspace import Source

    first = next((path for path in paths if os.path.exists(path)), os.curdir)
    settings, config = settings_for(first)
    if config.path is not None and config.problems:
        shown = os.path.relpath(config.path) if not os.path.relpath(config.path).startswith("..") else str(config.path)
        document = Document(config.text)  # positions only: the config file is TOML
        report.results.append((Source(shown, config.text), document, sorted(config.problems, key=lambda d: d.span.start)))
        report.files_checked += 1
    return settings


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
    from taskdsl.document import Span
    from taskdsl.parallel import source_document

    if source.refused:
        offset, message = source.problem
        return source_document(source, library), [Diagnostic("TD001", Severity.ERROR, Span(0, 0), message)]
    path = os.path.abspath(source.path)
    result = check_document(source_document(source, library), path=path, library=library, settings=settings)
    diagnostics = list(result.diagnostics)
    if source.problem is not None:
        offset, message = source.problem
        message += "; the undecodable bytes are shown as U+FFFD"
        diagnostics.append(Diagnostic("TD001", Severity.ERROR, Span(offset, min(offset + 1, len(source.text))), message))
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return result.document, diagnostics


def fix_source(source, library, settings, report: Report, unsafe: bool = False) -> None:
    """`--fix`: the fixer's safe fixes (all fixes with `--unsafe-fixes`), written back only when the
    file changed."""
    from taskdsl.fixer import fix_text
    from taskdsl.workspace import write_source

    fixed = fix_text(source.text, path=os.path.abspath(source.path), library=library, settings=settings,
                     unsafe=unsafe)
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
    elif fmt == "github":
        out.writelines(line + "\n" for line in github_report(report))
    elif fmt == "junit":
        out.write(junit_report(report))
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


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}


def _github_escape(text: str, property_value: bool = False) -> str:
    """As @actions/core escapes workflow commands: % CR LF always, ':' and ',' in property values."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def github_report(report: Report) -> list[str]:
    """GitHub Actions workflow commands: one annotation per diagnostic, shown on the pull request's diff."""
    lines = []
    for source, document, diagnostics in report.results:
        for diagnostic in diagnostics:
            r = _range(document, diagnostic.span)
            properties = {"file": source.path, "line": r["line"], "col": r["column"], "endLine": r["endLine"],
                          "endColumn": r["endColumn"], "title": diagnostic.code}
            listed = ",".join(f"{key}={_github_escape(str(value), True)}" for key, value in properties.items())
            lines.append(f"::{_GITHUB_LEVEL[diagnostic.severity.value]} {listed}::{_github_escape(diagnostic.message)}")
    return lines


def junit_report(report: Report) -> str:
    """JUnit XML: a test suite per checked file, a failing test case per diagnostic (its type the
    severity), one passing test case for a file without any."""
    from taskdsl.junit import Case, Problem, Suite, junit_xml

    suites = []
    for source, document, diagnostics in report.results:
        cases = []
        for diagnostic in diagnostics:
            line, col = document.position(diagnostic.span.start)
            where = f"{line + 1}:{col + 1}"
            cases.append(Case(source.path, f"{diagnostic.code} {where}", failure=Problem(
                diagnostic.message, f"{source.path}:{where}: {diagnostic.severity.value} {diagnostic.code} "
                                    f"{diagnostic.message}", diagnostic.severity.value)))
        suites.append(Suite(source.path, cases or [Case(source.path, "taskdsl check")]))
    return junit_xml("taskdsl check", suites)


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
