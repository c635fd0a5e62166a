"""Docs of the codes about suppression comments (TD904, TD905, emitted by taskdsl.rules.suppression) and
about the project configuration file (TD9xx, emitted by taskdsl.project.config)."""

from taskdsl.language.diagnostics import Severity
from taskdsl.rules.registry import document_code

document_code(
    "TD904", Severity.WARNING, "unused suppression",
    what="A `<!-- taskdsl: ignore[CODE] -->` comment names a code that is not reported on the element after it "
         "(the element's own start tag, text and end tag; not its children).",
    why="A suppression left behind after the problem was fixed would silently hide the next real one.",
    bad='<!-- taskdsl: ignore[TD302] -->\n<task inherit_context="full">\n  <description>Summarize</description>\n</task>',
    good='<task inherit_context="full">\n  <description>Summarize</description>\n</task>',
    fix="Remove the unused code, or the whole comment when none of its codes is used (safe fix: `taskdsl check --fix`).",
)

document_code(
    "TD905", Severity.WARNING, "malformed suppression",
    what="A comment starting with `taskdsl:` is not `taskdsl: ignore[CODE, …]` with known codes, "
         "or it is not followed by an element on the next line.",
    why="A suppression that cannot be read suppresses nothing; the diagnostic it meant to silence is still reported.",
    bad='<!-- taskdsl: ignore TD302 -->\n<task>…</task>',
    good='<!-- taskdsl: ignore[TD302] -->\n<task>…</task>',
    fix="Write `<!-- taskdsl: ignore[TD302] -->` (codes as `taskdsl rules` lists them, comma-separated) on the line "
        "just before the element. A code no rule has is named (with the closest known code); the comment's known "
        "codes still apply, and the safe fix (`taskdsl check --fix`) removes the unknown ones (the whole comment "
        "when none is known).",
)

document_code(
    "TD901", Severity.ERROR, "unknown configuration key",
    what="A key of taskdsl.toml (or of [tool.taskdsl] in pyproject.toml) that taskdsl does not know.",
    why="A misspelt key is otherwise ignored silently: the setting the user meant never applies.",
    bad='[lint]\nselct = ["TD3"]',
    good='[lint]\nselect = ["TD3"]',
    fix="Use the key the message suggests; docs/configuration.md lists every key. Quick fix: rename the key "
        "to the suggested one (unsafe: the value then takes effect; `taskdsl check --fix --unsafe-fixes` applies it).",
)

document_code(
    "TD902", Severity.ERROR, "invalid configuration value",
    what="A configuration value of the wrong type or out of range: a string where a list is expected, a negative "
         "timeout, an unknown rule code in `select`, a global that is not a name.",
    why="A bad value is dropped (the default applies) and the user must know it does not take effect.",
    bad='[run]\ntimeout = "10 minutes"',
    good='[run]\ntimeout = 600',
    fix="Write the value as the message says; docs/configuration.md shows each key with an example.",
)

document_code(
    "TD903", Severity.ERROR, "configuration file is not valid TOML",
    what="taskdsl.toml (or a pyproject.toml with a [tool.taskdsl] table) does not parse as TOML.",
    why="Nothing in the file applies until it parses: every setting falls back to its default.",
    bad='[lint]\nselect = ["TD3"',
    good='[lint]\nselect = ["TD3"]',
    fix="Correct the syntax at the position shown.",
)

document_code(
    "TD906", Severity.ERROR, "memory index is not a JSON object of strings",
    what="The memory index (`.taskdsl/memory.json`, or the file `[memory] index` names) does not parse as JSON, "
         "is not one object, holds a value that is not a string, names a path twice (a warning: the later "
         "entry wins), or cannot be opened (it is a symbolic link, not a regular file, or too large).",
    why="The index is read as a whole: until it parses, the memory system matches nothing and "
        "`taskdsl memory index` will not overwrite it (your hand edits are kept for you to fix). The index is "
        "configuration: while it has this error no run starts, as with an error in taskdsl.toml.",
    bad='{\n  "reports/q3.md": "Q3 revenue and costs",\n}',
    good='{\n  "reports/q3.md": "Q3 revenue and costs"\n}',
    fix="Correct the JSON at the position shown (each value is a string: what the file is about), or delete "
        "the file and run `taskdsl memory index`.",
)

document_code(
    "TD907", Severity.WARNING, "memory index names no file",
    what="A path of the memory index names no file of the project (it was moved or deleted).",
    why="The memory may match the entry, and the task then gets nothing for it (the notes say it could not "
        "be read).",
    bad='{\n  "reports/q2.md": "Q2 revenue"\n}',
    good='{\n  "reports/q3.md": "Q3 revenue and costs"\n}',
    fix="Remove the entry, or run `taskdsl memory index` (it drops entries whose file is gone).",
)

document_code(
    "TD908", Severity.ERROR, "memory index names a path outside the project",
    what="A path of the memory index is absolute, climbs out of the project (`../`), or is a symbolic link "
         "whose target is outside the project.",
    why="The memory system reads only the project's files (as every read of a run is confined): the entry "
        "is dropped when the index is read, and a matcher answering it is refused. The index is configuration: "
        "while it has this error no run starts, as with an error in taskdsl.toml.",
    bad='{\n  "../secrets/keys.txt": "API keys"\n}',
    good='{\n  "docs/keys.md": "How to request an API key"\n}',
    fix="Remove the entry; to give a task a file from outside the project, use `file_paths` with "
        "`--allow-read`.",
)
