"""Rank 2, project: what belongs to the project — its root, its configuration (`taskdsl.toml`,
`[tool.taskdsl]`), settings, discovery and reading of files, what a run may read.
May import: support, language."""
