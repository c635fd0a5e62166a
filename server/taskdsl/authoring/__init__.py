"""Rank 7, authoring: holding templates to what they should do — tests in the language
(`testcases`), prompt previews (`preview`) and pictures of a template (`graph`). Each is a thin
view over the run path (`evaluator.plan`) and the semantic model; none has its own way of reading
what a template means. The commands and editor commands that show them live in `cli` and `lsp`.
May import: support … evaluator (ranks 0–6); not task_system (same rank)."""
