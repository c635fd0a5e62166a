"""Names every part derives the same way: a file's task name, a template's param list."""

from __future__ import annotations

import os
import re

TEMPLATE_SUFFIXES = (".task.xml", ".xml")


def file_stem(path: str | None) -> str | None:
    """The name a root task without `name` is registered under: its file name without .task.xml."""
    if not path:
        return None
    base = os.path.basename(path)
    for suffix in TEMPLATE_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base or None


def split_params(value: str | None) -> list[str]:
    """`params="a, b"` → ['a', 'b'] (commas; spaces tolerated as separators too)."""
    return [p for p in re.split(r"[\s,]+", value or "") if p]
