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

# Larger files are refused (one TD001) rather than read: no template comes near this, and it
# bounds the memory a hostile file can make the checker use. The library index uses the same limit.
MAX_FILE_BYTES = 5_000_000
FIX_PASSES = 5
SKIPPED_DIRS = {"node_modules", "__pycache__"}
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

    from taskdsl import cli_ask  # match, ask: cheap to import (their work imports on use)

    cli_ask.add_parsers(commands)

    serve = commands.add_parser("serve", help="start the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", type=host_port, help="listen on a TCP socket")
    transport.add_argument("--ws", metavar="HOST:PORT", type=host_port, help="listen on a WebSocket")
    serve.add_argument("--log-level", default="WARNING", type=str.upper, choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                       help="log level (logs go to stderr)")
    serve.set_defaults(func=serve_command)
    return parser


def host_port(value: str) -> str:
    """HOST:PORT with a port number (HOST defaults to 127.0.0.1 when only ':PORT' is given)."""
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT with a port from 1 to 65535, got {value!r}")
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


# --------------------------------------------------------------------------- check: reading files


@dataclass
class Source:
    """One file to check: its path as the user wrote it, its text, and what reading it found."""

    path: str
    text: str = ""
    bom: bool = False
    read_problem: tuple[int, str] | None = None  # (offset, TD001 message) for bytes we could not decode
    refused: bool = False  # too large or binary: only the read problem is reported
    newline_bytes: bytes = b""


@dataclass
class Report:
    """What one `check` run found, for every output format."""

    results: list = field(default_factory=list)  # (Source, Document, [Diagnostic])
    fixed: list = field(default_factory=list)  # (path, line, col, code, title)
    usage_errors: list[str] = field(default_factory=list)
    files_checked: int = 0


def collect_files(paths: list[str], settings, report: Report) -> list[str]:
    """Explicit files as given; folders searched for the template globs. Problems go to the report."""
    files: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            report.usage_errors.append(f"{raw}: no such file or directory")
        elif path.is_dir():
            found = _templates_under(path, settings.files)
            if not found:
                globs = ", ".join(settings.files)
                report.usage_errors.append(f"{raw}: no templates ({globs}) in this folder")
            files.extend(found)
        elif not path.is_file():
            report.usage_errors.append(f"{raw}: not a regular file")
        else:
            files.append(raw)
    unique = list(dict.fromkeys(os.path.normpath(f) for f in files))
    return unique


def _templates_under(folder: Path, globs) -> list[str]:
    found = set()
    for pattern in globs:
        for candidate in folder.glob(pattern):
            relative_parts = candidate.relative_to(folder).parts[:-1]
            if any(part.startswith(".") or part in SKIPPED_DIRS for part in relative_parts):
                continue
            if candidate.is_file():
                found.add(str(candidate))
    return sorted(found)


def read_source(path: str) -> Source:
    """Read a file as a template: never raises for bad bytes (they become a TD001)."""
    source = Source(path)
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        source.refused = True
        source.read_problem = (0, f"the file is {size / 1_000_000:.1f} MB: templates larger than "
                                  f"{MAX_FILE_BYTES / 1_000_000:g} MB are not checked")
        return source
    with open(path, "rb") as handle:
        data = handle.read()
    nul = data.find(b"\x00")
    if nul >= 0:
        source.refused = True
        source.read_problem = (0, f"binary file (a NUL byte at byte {nul}): this is not a template")
        return source
    if data.startswith(b"\xef\xbb\xbf"):
        source.bom, data = True, data[3:]
    try:
        source.text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        source.text = data.decode("utf-8", errors="replace")
        offset = len(data[: error.start].decode("utf-8", errors="replace"))
        byte = error.start + (3 if source.bom else 0)
        source.read_problem = (offset, f"not valid UTF-8 at byte {byte} (0x{data[error.start]:02x}): templates are UTF-8; "
                                       "the undecodable bytes are shown as U+FFFD")
    return source


def _write_source(source: Source, text: str) -> None:
    data = (b"\xef\xbb\xbf" if source.bom else b"") + text.encode("utf-8")
    with open(source.path, "wb") as handle:
        handle.write(data)


# --------------------------------------------------------------------------- check: checking


def check_command(args) -> int:
    from taskdsl.settings import Settings

    settings = Settings()
    report = Report()
    files = collect_files(args.paths, settings, report)
    library = build_library([p for p in args.paths if os.path.exists(p)], files, settings)
    for path in files:
        try:
            source = read_source(path)
        except OSError as error:
            report.usage_errors.append(f"{path}: cannot read: {error.strerror or error}")
            continue
        if args.fix and not source.refused and source.read_problem is None:
            _fix_file(source, library, settings, report)
        document, diagnostics = check_source(source, library, settings)
        report.results.append((source, document, diagnostics))
        report.files_checked += 1
    write_report(report, args.format, sys.stdout, sys.stderr)
    if report.usage_errors:
        return 2
    return 1 if any(d.is_error for _, _, ds in report.results for d in ds) else 0


def build_library(paths: list[str], files: list[str], settings):
    """The workspace index over the folders and files given, so refs resolve across them (SPEC §6).
    None when the library module is not installed."""
    try:
        from taskdsl.library import Library

        if hasattr(Library, "from_paths"):
            # keep the parsed documents: each file is then parsed once, for the index and the check
            return Library.from_paths(paths, settings, keep_documents=True)
        library = Library(settings)
        for path in files:
            library.update_file(str(path))
        return library
    except ModuleNotFoundError as error:
        if error.name != "taskdsl.library":
            raise
        return None
    except Exception as error:  # a broken index must not stop the check of each file
        print(f"taskdsl: warning: the task library could not be built ({error}); references are not resolved", file=sys.stderr)
        return None


def check_source(source: Source, library, settings):
    """(Document, diagnostics) of one file, with the reading problems in front."""
    from taskdsl.checker import check_document
    from taskdsl.diagnostics import Diagnostic, Severity
    from taskdsl.document import Span, parse

    if source.refused:
        offset, message = source.read_problem
        return parse(""), [Diagnostic("TD001", Severity.ERROR, Span(0, 0), message)]
    path = os.path.abspath(source.path)
    indexed = library.take_document(path, source.text) if hasattr(library, "take_document") else None
    result = check_document(indexed or parse(source.text), path=path, library=library, settings=settings)
    diagnostics = list(result.diagnostics)
    if source.read_problem is not None:
        offset, message = source.read_problem
        diagnostics.append(Diagnostic("TD001", Severity.ERROR, Span(offset, min(offset + 1, len(source.text))), message))
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return result.document, diagnostics


def _fix_file(source: Source, library, settings, report: Report) -> None:
    """Apply every safe fix, pass after pass until nothing changes; write only a changed file."""
    from taskdsl.checker import check_text
    from taskdsl.diagnostics import apply_edits

    text = source.text
    for _ in range(FIX_PASSES):
        result = check_text(text, path=os.path.abspath(source.path), library=library, settings=settings)
        chosen, taken = [], []
        for diagnostic in result.diagnostics:
            fix = next((f for f in diagnostic.fixes if f.safe and f.edits), None)
            if fix is None or any(_overlaps(edit.span, other) for edit in fix.edits for other in taken):
                continue  # overlapping fixes wait for the next pass, on the updated text
            chosen.append((diagnostic, fix))
            taken.extend(edit.span for edit in fix.edits)
        if not chosen:
            break
        new_text = apply_edits(text, [edit for _, fix in chosen for edit in fix.edits])
        if new_text == text:
            break
        for diagnostic, fix in chosen:
            line, col = result.document.position(diagnostic.span.start)
            report.fixed.append((source.path, line + 1, col + 1, diagnostic.code, fix.title))
        text = new_text
    if text != source.text:
        _write_source(source, text)
        source.text = text


def _overlaps(a, b) -> bool:
    return a.start < b.end and b.start < a.end or a.start == b.start


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


def _related_json(source: Source, document, related) -> dict:
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


def _sarif_related(source: Source, document, number: int, related) -> dict:
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


def _freeze_imports() -> None:
    """Move what is imported by now (it lives as long as the process) out of the cyclic GC's
    reach. Every edit builds a new document, and the full collections that triggers walked the
    ~55k import-time objects each time: ~60% of a 140 ms pause every few edits on a 2,000-line
    file (bench/run_all.py). The checker's modules are imported first: the first diagnostic
    needs them anyway (xmlschema and litellm are not among them)."""
    import gc

    try:
        import taskdsl.rules  # noqa: F401
        import taskdsl.schema_check  # noqa: F401
    except Exception:  # the server reports a broken module itself
        pass
    gc.freeze()
    # A 2,000-line document is ~12k objects, built again on every edit. With the default young
    # generation of 700 objects each scan triggered ~17 young and ~2 middle collections, and every
    # few edits a full one: the p95 of edit → re-diagnosis was 49 ms against a p50 of 27 ms
    # (bench/bench_server.py). Documents hold no reference cycles (their parent links are weak),
    # so reference counting frees them; the cyclic GC only has to run now and then.
    gc.set_threshold(20_000, 20, 20)


def serve_command(args) -> int:
    """Delegate to the language server module (pygls is imported only here)."""
    try:
        from taskdsl import server
    except ImportError as error:
        return _unavailable("serve", str(error))
    _freeze_imports()
    for entry in ("main", "serve", "start"):
        function = getattr(server, entry, None)
        if callable(function):
            result = function(args)
            return int(result or 0)
    return _unavailable("serve")
