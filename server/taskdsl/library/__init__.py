"""Rank 4, library: what the project defines — the index over the file models, definitions, the
reference graph.
May import: support, language, project, meaning.

The workspace task library: every task and template definition, and every reference to one.

The editor and the checker see the library through this index (the evaluator compiles its own
runtime `TaskLibrary` from the files this index resolves to). A ref resolves by name first, then
by `type:subtype` key. The package imports no checker: the checks read it (`checker.check_index`
checks the files of a project through it). Its modules, none importing this package back:
`definitions` (the data classes, and what one file defines and references: `index_document`),
`graph` (the reference graph between names and its cycles) and `index` (the `Library` class: the
files, per-file updates, queries, the rename check, `suggest`). This module re-exports the names
the rest of the project imports from `taskdsl.library`."""

from taskdsl.library.definitions import (
    IDENTIFIER_RE,
    SETTING_TAGS,
    TASK_NAME_RE,
    TASK_REF_RE,
    TEMPLATE_SUFFIX,
    Definition,
    FileIndex,
    Param,
    Range,
    Reference,
    _call_reference,
    _ref_reference,
    index_document,
)
from taskdsl.library.graph import _Graph
from taskdsl.library.index import Library, _stamp, normalize, suggest
from taskdsl.meaning.uses import RenameError
from taskdsl.project.workspace import read_text

__all__ = [
    "IDENTIFIER_RE", "SETTING_TAGS", "TASK_NAME_RE", "TASK_REF_RE", "TEMPLATE_SUFFIX",
    "Definition", "FileIndex", "Library", "Param", "Range", "Reference", "RenameError", "_Graph",
    "_call_reference", "_ref_reference", "_stamp", "index_document", "normalize", "read_text", "suggest",
]
