"""Garbage-collector settings for long-lived processes (the server, a large check)."""

from __future__ import annotations


def freeze_imports() -> None:
    """Move what is imported by now (it lives as long as the process) out of the cyclic GC's
    reach. Every edit builds a new document, and the full collections that triggers walked the
    ~55k import-time objects each time: ~60% of a 140 ms pause every few edits on a 2,000-line
    file (bench/run_all.py). The caller imports what the process will keep first (the server's
    import_features: the checker, the rules and the features; xmlschema and litellm are not among
    them), then calls this once initialize is answered."""
    import gc

    gc.freeze()
    # A 2,000-line document is ~12k objects, built again on every edit. With the default young
    # generation of 700 objects each scan triggered ~17 young and ~2 middle collections, and every
    # few edits a full one: the p95 of edit → re-diagnosis was 49 ms against a p50 of 27 ms
    # (bench/bench_server.py). Documents hold no reference cycles (their parent links are weak),
    # so reference counting frees them; the cyclic GC only has to run now and then.
    gc.set_threshold(20_000, 20, 20)
