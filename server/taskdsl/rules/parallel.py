"""`taskdsl check` over many files: each file read once, checked on every core, reported in order.

The index is built once, in this process (cross-file rules need all of it), with the read sources
and parsed documents kept (`Library.from_discovered(…, keep_documents=True)`): the check takes them instead of reading
and parsing again. With more than one job and enough files, the files are cut into contiguous
chunks and checked by forked worker processes, which inherit the built index for free
(copy-on-write) and send back only each file's diagnostics (plain picklable data); this process
then reports them in the files' order with its own documents (the same texts, so the same
positions), so the output is byte for byte the serial one.

Serial instead: one job, `--fix` (it rewrites files in turn), few files (forking and sending the
results back cost more than they save), no index, or a platform without fork. A worker that
dies or fails makes the unfinished chunks run here, after a warning: the report stays whole and
the exit code is the serial one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Callable

# below this many files forking and gathering cost more than the pool saves (measured on 2 cores
# with `bench/bench_library.py --break-even`: 480 files 1.5x slower, 680 files 0.8x)
MIN_PARALLEL_FILES = 600
CHUNKS_PER_JOB = 4  # smaller chunks even out slow files across the workers

_SHARED = None  # (sources, library, settings, check) for the forked workers: inherited, never pickled


def default_jobs() -> int:
    return os.cpu_count() or 1


def positive_jobs(value: str) -> int:
    """`--jobs N`: a whole number of processes, at least 1."""
    import argparse

    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, 1 or more (1: check in this process), got {value!r}")
    return int(value)


@dataclass(frozen=True)
class FileCheck:
    """How the command line reads, fixes and checks one file (its own functions, handed in)."""

    read: Callable  # path → Source (raises OSError)
    check: Callable  # (source, library, settings) → (Document, diagnostics)
    fix: Callable  # (source, library, settings, report) → None


def check_paths(paths: list[str], library, settings, report, each: FileCheck, jobs: int = 1, fix: bool = False) -> None:
    """Read (once), optionally fix, and check each path; results and reading problems go to the
    report in the paths' order."""
    sources = [source for source in (_read(path, library, report, each.read) for path in paths) if source is not None]
    if fix:  # in turn: a fix re-indexes its file before the next one is fixed and checked
        for source in sources:
            if not source.refused and source.problem is None:
                each.fix(source, library, settings, report)
            _add(report, source, *each.check(source, library, settings))
        return
    for source, (document, diagnostics) in zip(sources, _checked(sources, library, settings, jobs, each.check)):
        _add(report, source, document, diagnostics)


def source_document(source, library):
    """The Document a source is checked as: the index's own parse of this text when it kept one."""
    from taskdsl.language.document import parse

    if source.refused:
        return parse("")
    indexed = library.take_document(os.path.abspath(source.path), source.text) if library is not None else None
    return indexed or parse(source.text)


def _read(path: str, library, report, read_source: Callable):
    """The source the index read for this path (one read per file), else read it now."""
    source = library.take_source(path) if library is not None else None
    try:
        if isinstance(source, OSError):
            raise source
        if source is None:
            return read_source(path)
    except OSError as error:
        report.usage_errors.append(f"{path}: cannot read: {error.strerror or error}")
        return None
    source.path = path  # as the user named it (the index keys absolute paths)
    return source


def _add(report, source, document, diagnostics) -> None:
    report.results.append((source, document, diagnostics))
    report.files_checked += 1


def _checked(sources: list, library, settings, jobs: int, check_source: Callable) -> list[tuple]:
    """(document, diagnostics) of each source: from the workers when it pays, else checked here."""
    import multiprocessing

    results: list = [None] * len(sources)
    if jobs >= 2 and len(sources) >= MIN_PARALLEL_FILES and library is not None \
            and "fork" in multiprocessing.get_all_start_methods():
        # the first file is checked before the fork: the index's tables built on first use (the
        # call graph's cycles, the rules' caches) are then built once and inherited
        results[0] = check_source(sources[0], library, settings)
        global _SHARED
        _SHARED = (sources, library, settings, check_source)
        try:
            chunks = [(start + 1, stop + 1) for start, stop in _chunks(len(sources) - 1, jobs)]
            for start, found in _run_pool(multiprocessing.get_context("fork"), jobs, chunks):
                for index, diagnostics in enumerate(found, start):
                    results[index] = (source_document(sources[index], library), diagnostics)
        finally:
            _SHARED = None
    # serial, or what a failed worker left
    return [result or check_source(source, library, settings) for source, result in zip(sources, results)]


def _chunks(count: int, jobs: int) -> list[tuple[int, int]]:
    """Contiguous (start, stop) ranges covering 0..count, about CHUNKS_PER_JOB per job."""
    size = max(1, -(-count // (jobs * CHUNKS_PER_JOB)))
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _run_pool(context, jobs: int, chunks: list[tuple[int, int]]):
    """(start, [diagnostics…]) per chunk that finished; a failure ends the pool with a warning
    and leaves the rest to be checked in this process."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    executor = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), mp_context=context)
    try:
        futures = [executor.submit(_in_worker, start, stop) for start, stop in chunks]
        for future in as_completed(futures):
            yield future.result()
    except Exception as error:  # a worker killed (BrokenProcessPool) or a failing check
        why = str(error) or type(error).__name__
        print(f"taskdsl: warning: a check worker failed ({why}); checking the remaining files in this process",
              file=sys.stderr)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _in_worker(start: int, stop: int) -> tuple[int, list]:
    return check_chunk(start, stop)  # looked up in the worker: what the fork inherited


def check_chunk(start: int, stop: int) -> tuple[int, list]:
    """In a worker: the diagnostics of sources[start:stop] (the index is the parent's, inherited)."""
    sources, library, settings, check_source = _SHARED
    return start, [check_source(sources[index], library, settings)[1] for index in range(start, stop)]
