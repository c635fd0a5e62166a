"""Rank 7, task system: from a request in plain words to a running structure — matching the
library, `ask` (write, check, repair) and re-planning a failed step (the evaluator is handed
`replan.recover` as a hook; it never imports this package).
May import: support … evaluator (ranks 0–6); not authoring (same rank)."""
