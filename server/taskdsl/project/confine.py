"""What a run may read: files under the project root (after resolving symlinks), plus the folders
the user allowed on purpose (`--allow-read`, `[run] allow_read`, the editor's machine-scoped
`taskdsl.run.allowRead`); never anything under /proc, /sys or /dev, allowed or not.

The checker (TD802) and the runner ask `read_refusal` the same question.
"""

from __future__ import annotations

import os
from typing import Iterable

from taskdsl.project.workspace import project_root  # noqa: F401  (the one answer; importers name it here too)
from taskdsl.support.reading import within  # noqa: F401  (one answer: a sibling 'project-other' is outside)

NEVER_READ = ("/proc", "/sys", "/dev")
READ_CODE = "TD802"
HOW_TO_ALLOW = ("allow it with --allow-read {folder} (taskdsl run), allow_read in the [run] table of "
                "taskdsl.toml, or the editor setting taskdsl.run.allowRead")



def read_refusal(path: str, root: str, allowed: Iterable[str] = ()) -> str | None:
    """Why a run may not read path (already joined to its base folder), or None when it may."""
    real = os.path.realpath(path)
    for never in NEVER_READ:
        if within(real, never):
            return f"'{path}' is under {never}, which a run never reads"
    if any(within(real, os.path.realpath(folder)) for folder in (root, *allowed)):
        return None
    shown = f"'{path}'" + (f" (a link to '{real}')" if real != os.path.abspath(path) else "")
    return (f"{shown} is outside the project ({root}): "
            + HOW_TO_ALLOW.format(folder=os.path.dirname(real) or real))
