"""Model matrices and repeats of tests: `taskdsl test --model A --model B`, `--repeat N`, and
`<test repeat="N" min_pass="0.8">`.

Every test runs under each model (`None`: the test's own), `case.repeat × repeat` times (each run
through the one run path, `testcases.run_case`); the runs of a (test, model) cell become one
`Cell`: it passes when the share of passing runs reaches the test's `min_pass` (1: every run).
Per model, the `Column` gives the pass rate over its cells, the tokens, the cost and the median
latency of a run. The text table, the JSON and the JUnit of `taskdsl test` are made from these.
A repeated test never reads the answer cache (a repeat samples the model again).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from taskdsl.authoring import testcases


@dataclass
class Cell:
    case: testcases.TestCase
    model: str | None
    runs: list[testcases.Outcome] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return sum(o.passed for o in self.runs)

    @property
    def rate(self) -> float:
        return self.passes / len(self.runs) if self.runs else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.runs) and self.rate >= self.case.min_pass - 1e-9

    @property
    def status(self) -> str:
        if self.passed:
            return testcases.PASSED
        return testcases.ERROR if all(o.status == testcases.ERROR for o in self.runs) else testcases.FAILED

    def outcome(self) -> testcases.Outcome:
        """The cell as one outcome (what the plain report, the editor and JUnit show)."""
        first_bad = next((o for o in self.runs if not o.passed), None)
        seconds = sum(o.seconds for o in self.runs)
        if len(self.runs) == 1:
            only = self.runs[0]
            return testcases.Outcome(self.case, only.status, only.message, only.output, only.expect, seconds, only.usage)
        share = f"{self.passes}/{len(self.runs)} runs passed (min_pass {self.case.min_pass:g})"
        if self.passed:
            return testcases.Outcome(self.case, testcases.PASSED, share, seconds=seconds)
        return testcases.Outcome(self.case, self.status, f"{share}; first failure: {first_bad.message}",
                                 first_bad.output, first_bad.expect, seconds)


@dataclass
class Column:
    model: str | None
    cells: list[Cell]

    @property
    def pass_rate(self) -> float:
        return sum(c.passed for c in self.cells) / len(self.cells) if self.cells else 0.0

    def _usage(self, key: str) -> float:
        return sum((o.usage or {}).get(key) or 0 for c in self.cells for o in c.runs)

    @property
    def tokens(self) -> int:
        return int(self._usage("prompt_tokens") + self._usage("completion_tokens"))

    @property
    def cost(self) -> float:
        return round(self._usage("cost"), 8)

    @property
    def median_latency(self) -> float:
        times = [o.seconds for c in self.cells for o in c.runs]
        return statistics.median(times) if times else 0.0

    def to_json(self) -> dict:
        return {"model": self.model, "pass_rate": round(self.pass_rate, 4), "tokens": self.tokens, "cost": self.cost,
                "median_latency_s": round(self.median_latency, 3)}


async def run_matrix(cases: list[tuple], models: list[str | None], repeat: int = 1, **options) -> list[Column]:
    """(case, index) tuples under each model, each case.repeat × repeat times; options go to run_cases."""
    columns = []
    # a repeated test samples the model again: the answer cache would give the first answer back
    uncached = {**options, "call_options": {**(options.get("call_options") or {}), "cache": False}}
    for model in models:
        cells = {id(entry): Cell(entry[0], model) for entry in cases}
        for group, given in ((lambda n: n == 1, options), (lambda n: n > 1, uncached)):
            runs = [entry for entry in cases if group(entry[0].repeat * repeat)
                    for _ in range(entry[0].repeat * repeat)]
            if runs:
                for entry, outcome in zip(runs, await testcases.run_cases(runs, model=model, **given)):
                    cells[id(entry)].runs.append(outcome)
        columns.append(Column(model, [cells[id(entry)] for entry in cases]))
    return columns


def table(columns: list[Column]) -> str:
    """Per test and model: ✓/✗ with passing runs; per model: pass rate, tokens, cost, median latency."""
    if not columns:
        return ""
    heads = [c.model or "(the test's model)" for c in columns]
    rows = [[c.case.id] + [_mark(col.cells[i]) for col in columns] for i, c in enumerate(columns[0].cells)]
    rows += [["pass rate"] + [f"{c.pass_rate:.0%}" for c in columns],
             ["tokens"] + [f"{c.tokens:,}" for c in columns],
             ["cost"] + [f"${c.cost:.4f}" for c in columns],
             ["median latency"] + [f"{c.median_latency:.2f}s" for c in columns]]
    widths = [max(len(r[i]) for r in rows + [["test"] + heads]) for i in range(len(heads) + 1)]
    lines = ["  ".join(text.ljust(w) for text, w in zip(["test"] + heads, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for i, row in enumerate(rows):
        if i == len(rows) - 4:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join(text.ljust(w) for text, w in zip(row, widths)).rstrip())
    return "\n".join(lines)


def _mark(cell: Cell) -> str:
    mark = "✓" if cell.passed else "✗" if cell.status == testcases.FAILED else "!"
    return f"{mark} {cell.passes}/{len(cell.runs)}" if len(cell.runs) > 1 else mark


def to_json(columns: list[Column]) -> dict:
    tests = []
    for i, cell in enumerate(columns[0].cells if columns else []):
        case = cell.case
        tests.append({"id": case.id, "name": case.name, "repeat": len(cell.runs), "min_pass": case.min_pass,
                      "results": [{"model": col.model, "status": col.cells[i].status, "passed": col.cells[i].passed,
                                   "passes": col.cells[i].passes, "runs": len(col.cells[i].runs)} for col in columns]})
    return {"models": [c.to_json() for c in columns], "tests": tests}
