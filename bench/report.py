"""Rows that every benchmark script can hand to bench/run_all.py (``--json PATH``).

A row is one figure: its value, the floor measured in the same run (if it has one), the ratio,
the goal and whether it was met. ``met`` is None for a figure without a goal.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass
class Row:
    group: str
    name: str
    value: float
    unit: str  # "ms", "MB", "x" …
    floor: float | None = None
    floor_name: str = ""
    goal: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.value / self.floor if self.floor else None


def ratio_row(group: str, name: str, value: float, floor: float, floor_name: str, limit: float | None, unit: str = "ms", note: str = "") -> Row:
    """A figure judged by its ratio to the floor (goal: ratio ≤ limit)."""
    goal = f"≤ {limit:g}x floor" if limit is not None else ""
    met = None if limit is None or not floor else value / floor <= limit
    return Row(group, name, value, unit, floor, floor_name, goal, met, note)


def limit_row(group: str, name: str, value: float, limit: float | None, unit: str = "ms", strict: bool = False, note: str = "") -> Row:
    """A figure judged by an absolute limit (value ≤ limit, or < limit when strict)."""
    if limit is None:
        return Row(group, name, value, unit, note=note)
    met = value < limit if strict else value <= limit
    return Row(group, name, value, unit, goal=f"{'<' if strict else '≤'} {limit:g} {unit}", met=met, note=note)


def write(path: str | None, rows: list[Row]) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump([asdict(r) for r in rows], handle, indent=1)


def read(path: str) -> list[Row]:
    with open(path, encoding="utf-8") as handle:
        return [Row(**r) for r in json.load(handle)]


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "ms":
        return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms" if value < 1000 else f"{value:.0f} ms"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"


def table(rows: list[Row], markdown: bool = False) -> str:
    header = ("measure", "value", "floor", "ratio", "goal", "met?")
    lines = []
    cells = []
    for r in rows:
        ratio = f"{r.ratio:.1f}x" if r.ratio is not None else ""
        floor = f"{fmt(r.floor, r.unit)} ({r.floor_name})" if r.floor is not None else ""
        met = "" if r.met is None else ("yes" if r.met else "**NO**" if markdown else "MISSED")
        name = f"{r.name} — {r.note}" if r.note else r.name
        cells.append((name, fmt(r.value, r.unit), floor, ratio, r.goal, met))
    if markdown:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(cell, widths)) for cell in cells]
    return "\n".join(lines)
