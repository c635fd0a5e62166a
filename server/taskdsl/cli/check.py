"""`taskdsl check PATH…`: check templates and folders of templates (SPEC §9).

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


# --------------------------------------------------------------------------- check: files


@dataclass
class Report:
    """What one `check` run found, for every output format."""

    results: list = field(default_factory=list)  # (Source, Document, [Diagnostic])
    fixed: list = field(default_factory=list)  # (path, line, col, code, title)
    usage_errors: list[str] = field(default_factory=list)
    files_checked: int = 0
    files_reached: int = 0  # of those, the files named templates reach (a library they call): not named
    safe_fixes_only: bool = False  # --fix without --unsafe-fixes: the summary counts what those would fix
    configured: set = field(default_factory=set)  # the project roots whose configuration is reported
    fix: bool | None = None  # --fix: None without it, else whether unsafe fixes are applied too
    not_fixed: list = field(default_factory=list)  # (path, why): reached files --fix leaves as they are
    notes: list[str] = field(default_factory=list)  # said on stderr before the summary (projects passed over)


@dataclass
class Targets:
    """What `check PATH…` checks (files: explicit ones as given, folders' templates) and what it
    indexes to resolve references: the project of every path, as `taskdsl run` does."""

    files: list[str] = field(default_factory=list)
    found: object = None  # workspace.Discovered
    folders: list[str] = field(default_factory=list)  # the project roots
    explicit: list[str] = field(default_factory=list)  # the templates named on the command line
    configuration: list[str] = field(default_factory=list)  # the configuration files named (absolute)
    elsewhere: dict = field(default_factory=dict)  # reached file (absolute) outside its entry's project → the entry
    reached: int = 0  # files added because a named template reaches them


#: the configuration files `check` takes by name (their project's configuration is checked)
CONFIG_NAMES = ("taskdsl.toml", "pyproject.toml")


def file_kind(path: Path, settings) -> str:
    """What a file named on the command line is to `check`: "template" (an .xml file, or one the
    project's `files` globs take), "configuration" (a taskdsl.toml, a pyproject.toml, the
    project's memory index) or "other" (refused: checking it as a template gives only a bogus
    XML error)."""
    from taskdsl.project.config import project_root
    from taskdsl.project.memory_index import index_path
    from taskdsl.project.workspace import glob_regex

    if path.name.lower().endswith(".xml"):
        return "template"
    if path.name in CONFIG_NAMES:
        return "configuration"
    absolute = os.path.abspath(path)
    root = str(project_root(absolute))
    if absolute == index_path(root, settings):
        return "configuration"
    relative = os.path.relpath(absolute, root).replace(os.sep, "/")
    if any(glob_regex(pattern.lstrip("/")).fullmatch(relative) for pattern in settings.files):
        return "template"
    return "other"


def collect_files(paths: list[str], settings, report: Report) -> Targets:
    """Explicit files as given; folders: the templates discovery finds in them. Each path's
    project (its root folder) is discovered as a whole, so references resolve across it."""
    from taskdsl.project import workspace

    given: list[tuple[str, Path]] = []
    configuration: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            report.usage_errors.append(f"{raw}: no such file or directory")
        elif not path.is_dir() and not path.is_file():
            report.usage_errors.append(f"{raw}: not a regular file")
        elif path.is_file() and (kind := file_kind(path, settings)) != "template":
            if kind == "configuration":
                configuration.append(os.path.abspath(path))
            else:
                report.usage_errors.append(f"{raw}: not a template: taskdsl check takes templates (*.xml), "
                                           "folders of them, and a project's taskdsl.toml, pyproject.toml "
                                           "or memory index")
        else:
            given.append((raw, path))
    roots = list(dict.fromkeys(workspace.project_root(path) for _, path in given))
    explicit = [os.path.abspath(path) for _, path in given if path.is_file()]
    targets = Targets(folders=roots, configuration=configuration)
    targets.found = workspace.discover(roots + explicit, settings)
    files: list[str] = []
    for raw, path in given:
        if path.is_file():
            files.append(raw)
            targets.explicit.append(raw)
            continue
        folder = os.path.abspath(path)
        inside = [f for f in targets.found.project_files if f.startswith(folder.rstrip(os.sep) + os.sep)]
        nested = [n for n in getattr(targets.found, "nested", ()) if n.startswith(folder.rstrip(os.sep) + os.sep)]
        for project in nested:  # SPEC §17: a folder with its own configuration is its own project
            shown = os.path.relpath(project)
            report.notes.append(f"skipped {shown}/: a project of its own (its configuration file); check it with "
                                f"`taskdsl check {shown}`")
        if not inside:
            globs = ", ".join(settings.files)
            report.usage_errors.append(f"{raw}: no templates ({globs}) in this folder")
        files.extend(os.path.relpath(f) if not os.path.isabs(raw) else f for f in inside)
    targets.files = list(dict.fromkeys(os.path.normpath(f) for f in files))
    return targets


def add_reached_files(targets: Targets, library) -> None:
    """`check FILE` checks what `run FILE` checks: FILE and every file it reaches (a library
    template it calls, a task it refs), found by the run's gate's own reach, so a clean check
    means the run is not refused. Each reached file is shown relative to the current folder
    when inside it, as the run's refusal shows it."""
    from taskdsl.library.index import reached_files

    if library is None:
        return
    files = list(targets.files)
    given = {os.path.abspath(f) for f in files}
    from taskdsl.project.config import project_root
    from taskdsl.support.reading import within

    for entry in targets.explicit:
        root = str(project_root(os.path.abspath(entry)))
        for other in reached_files(library, os.path.abspath(entry))[1:]:
            if other not in given:
                given.add(other)
                targets.reached += 1
                relative = os.path.relpath(other)
                files.append(other if relative.startswith("..") else relative)
                if not within(os.path.realpath(other), root):
                    targets.elsewhere[os.path.realpath(other)] = entry  # checked, never rewritten by --fix
    targets.files = files


def read_source(path: str):
    """Read a file as a template (the one reader): bad bytes become a TD001, never an exception."""
    from taskdsl.project.workspace import read_source as read

    return read(path)


# --------------------------------------------------------------------------- check: checking


def jobs(value: str) -> int:
    from taskdsl.rules.parallel import positive_jobs

    return positive_jobs(value)


def check_command(args) -> int:
    import functools

    from taskdsl.language.document import gc_paused
    from taskdsl.rules.parallel import FileCheck, check_paths, default_jobs

    report = Report()
    if args.unsafe_fixes and not args.fix:
        report.usage_errors.append("--unsafe-fixes applies fixes only together with --fix (taskdsl check --fix --unsafe-fixes)")
    report.safe_fixes_only = args.fix and not args.unsafe_fixes
    report.fix = bool(args.unsafe_fixes) if args.fix else None
    with gc_paused():  # bulk work that keeps what it builds (the index, every document)
        settings = project_settings(args.paths, report)
        targets = collect_files(args.paths, settings, report)
        library = build_library(targets, settings)
        add_reached_files(targets, library)
        report.files_reached = targets.reached
        check_configuration(targets.configuration, report)
        jobs = getattr(args, "jobs", None) or default_jobs()
        fix = functools.partial(fix_source, unsafe=args.unsafe_fixes, elsewhere=targets.elsewhere)
        each = FileCheck(read=read_source, check=check_source, fix=fix)
        check_paths(targets.files, library, settings, report, each, jobs=jobs, fix=args.fix)
    write_report(report, args.format, sys.stdout, sys.stderr)
    if report.usage_errors:
        return 2
    return 1 if any(d.is_error for _, _, ds in report.results for d in ds) else 0


def project_settings(paths: list[str], report: Report):
    """The settings of the checked project (its taskdsl.toml or [tool.taskdsl]: the project of the
    first path given); the config file's own problems are reported with the templates'."""
    from taskdsl.project.config import settings_for
    from taskdsl.language.document import Document
    from taskdsl.project.workspace import Source

    from taskdsl.project.config import project_root
    from taskdsl.project.memory_index import configuration_problems

    first = next((path for path in paths if os.path.exists(path)), os.curdir)
    if report.fix is not None:
        fix_configuration(str(project_root(first)), report)
    settings, config = settings_for(first)
    report.configured.add(str(project_root(first)))
    # the config file (TOML) and the memory index (JSON): their problems where they are written
    for path, text, problems in configuration_problems(project_root(first), settings, config):
        shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
        report.results.append((Source(shown, text), Document(text), problems))  # positions only
        report.files_checked += 1
    return settings


def fix_configuration(root: str, report: Report) -> None:
    """`--fix` on a project's configuration files: each problem's fix (its safe fixes; every fix with
    `--unsafe-fixes`, e.g. TD901's rename of a misspelt key) applied, the file written back as a
    template is, before the configuration is read and checked."""
    from taskdsl.language.diagnostics import apply_edits
    from taskdsl.language.document import Document
    from taskdsl.project.config import settings_for
    from taskdsl.project.memory_index import configuration_problems
    from taskdsl.project.workspace import read_source as read, write_source
    from taskdsl.rules.fixer import safe_fix

    settings, config = settings_for(root)
    for path, text, problems in configuration_problems(root, settings, config):
        edits, applied, taken = [], [], []
        for problem in problems:
            fix = safe_fix(problem, unsafe=report.fix)
            if fix is None or any(e.span.start < t.end and t.start < e.span.end for e in fix.edits for t in taken):
                continue
            edits += fix.edits
            taken += [e.span for e in fix.edits]
            applied.append((problem, fix))
        if not edits:
            continue
        source = read(path)
        if source.text != text:
            continue  # changed since it was checked: leave it
        write_source(source, apply_edits(text, edits))
        shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
        document = Document(text)
        for problem, fix in applied:
            line, col = document.position(problem.span.start)
            report.fixed.append((shown, line + 1, col + 1, problem.code, fix.title))


def check_configuration(files: list[str], report: Report) -> None:
    """A configuration file named on the command line (`taskdsl check taskdsl.toml`): its project's
    configuration is checked exactly as `check .` checks it (once per project), and the file named
    counts as checked even when it has no problem."""
    from taskdsl.language.document import Document
    from taskdsl.project.config import project_root, settings_for
    from taskdsl.project.memory_index import configuration_problems
    from taskdsl.project.workspace import Source

    reported = {os.path.abspath(source.path) for source, _, _ in report.results}
    for file in files:
        root = str(project_root(file))
        if root not in report.configured:
            report.configured.add(root)
            if report.fix is not None:
                fix_configuration(root, report)
            settings, config = settings_for(root)
            for path, text, problems in configuration_problems(root, settings, config):
                shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
                report.results.append((Source(shown, text), Document(text), problems))
                report.files_checked += 1
                reported.add(os.path.abspath(path))
        if file not in reported:
            reported.add(file)
            report.files_checked += 1


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
    from taskdsl.rules.checker import check_document
    from taskdsl.language.diagnostics import Diagnostic, Severity
    from taskdsl.language.document import Span
    from taskdsl.rules.parallel import source_document

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


def fix_source(source, library, settings, report: Report, unsafe: bool = False, elsewhere: dict | None = None) -> None:
    """`--fix`: the fixer's safe fixes (all fixes with `--unsafe-fixes`), written back only when the
    file changed. A file the checked template reaches in another project (through library_paths) is
    checked, never rewritten: it is that project's to fix."""
    from taskdsl.rules.fixer import fix_text
    from taskdsl.project.workspace import write_source
    from taskdsl.support.files import UnsafeWrite

    fixed = fix_text(source.text, path=os.path.abspath(source.path), library=library, settings=settings,
                     unsafe=unsafe)
    entry = (elsewhere or {}).get(os.path.realpath(source.path))
    if fixed.text != source.text and entry is not None:
        report.not_fixed.append((source.path, f"outside the project of {entry}: fix it in its own project "
                                              f"(taskdsl check --fix {source.path})"))
        return
    if fixed.text != source.text:
        try:
            write_source(source, fixed.text)
        except OSError as error:  # a link, a hard-linked file, a folder of another user: nothing written
            why = str(error) if isinstance(error, UnsafeWrite) else f"{source.path}: {error.strerror or error}"
            report.usage_errors.append(f"cannot fix {source.path}: {why}")
            return
    for applied in fixed.applied:
        report.fixed.append((source.path, applied.line + 1, applied.column + 1, applied.diagnostic.code,
                             applied.fix.title))
        source.text = fixed.text
        if library is not None:  # the file's index entry follows its new text
            library.update_file(os.path.abspath(source.path), fixed.text)


# --------------------------------------------------------------------------- check: output


def write_report(report: Report, fmt: str, out, err) -> None:
    info_stream = out if fmt == "text" else err
    for path, line, col, code, title in report.fixed:
        print(f"{path}:{line}:{col}: fixed {code} {title}", file=info_stream)
    for path, why in report.not_fixed:
        print(f"{path}: not fixed: {why}", file=info_stream)
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
        from taskdsl.support.terminal import shown

        for source, document, diagnostics in report.results:
            for diagnostic in diagnostics:  # a message quotes the file's own text: shown, never acted on
                line, col = document.position(diagnostic.span.start)
                print(shown(f"{source.path}:{line + 1}:{col + 1}: {diagnostic.severity.value} {diagnostic.code} "
                            f"{diagnostic.message}"), file=out)
    for note in report.notes:
        print(f"taskdsl check: {note}", file=err)
    for problem in report.usage_errors:
        print(f"taskdsl: error: {problem}", file=err)
    if report.files_checked or not report.usage_errors:  # "0 errors in 0 files" after a bad path reads as a pass
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
    if report.files_reached:  # `check a.task.xml` checks the library files it calls too, as its run would
        line += f" ({report.files_reached} reached by the templates named)"
    if report.fixed:
        line += f"; {_plural(len(report.fixed), 'fix', 'fixes')} applied"
    if report.safe_fixes_only and (unsafe := unsafe_fixes_left(report)):
        line += f"; {_plural(unsafe, 'more fix', 'more fixes')} with --unsafe-fixes"
    return line


def unsafe_fixes_left(report: Report) -> int:
    "The diagnostics left that only an unsafe fix (the fix `--fix --unsafe-fixes` applies) would fix."
    from taskdsl.rules.fixer import safe_fix

    return sum(1 for _, _, diagnostics in report.results for d in diagnostics
               if safe_fix(d) is None and safe_fix(d, unsafe=True) is not None)


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
    from taskdsl.support.junit import Case, Problem, Suite, junit_xml

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
