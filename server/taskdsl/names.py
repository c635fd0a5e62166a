"""Names every part derives the same way: a file's task name, a template's param list."""

from __future__ import annotations

import os
import re

TEMPLATE_SUFFIXES = (".task.xml", ".xml")
#: one entry of params= (or legacy parameters=): entries are separated by whitespace and/or commas
PARAM_RE = re.compile(r"[^,\s]+")


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
    """`params="a, b"`, `params="a b"` → ['a', 'b']: whitespace and/or commas separate entries."""
    return PARAM_RE.findall(value or "")
