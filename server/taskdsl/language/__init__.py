"""Rank 1, language: what the text of a template says and where — the tolerant scanner with
offsets, the safe XML parser, the `{{…}}` lexer, the cond language, the shell view of a command,
the vocabulary and content model from `schemas/task.xsd`, schema validation, `Diagnostic`.
May import: support."""
