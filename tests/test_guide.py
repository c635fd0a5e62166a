"""Every template in the user guide (docs/guide/*.md) is what the guide says it is.

Each ```xml block is checked with `taskdsl check`: clean, or exactly the codes its `expect:` marker
names. A block marked `run:` is run with the offline model `taskdsl/echo` and must exit 0; a
```text block marked `output` right after it must be exactly what the run printed. The markers are
HTML comments on the lines just before a fence (docs/guide/README.md describes them):

    <!-- file: greet.task.xml -->        save the block under this name (later blocks of the page see it)
    <!-- expect: TD402 -->               the block shows a mistake: check reports exactly these codes
    <!-- run: --input who=Ada -->        run it: taskdsl run FILE --model taskdsl/echo --input who=Ada
    <!-- output -->                      (before a ```text fence) what the last run block prints
    <!-- file: taskdsl.toml -->          (before any other fence) write the block into the project

The blocks of one page share a project folder, so a page can define a library and then call it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide"
PAGES = sorted(GUIDE.glob("*.md"))
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(file|expect|run|output)\s*(?::\s*(.*?))?\s*-->\s*$")
ANY_COMMENT = re.compile(r"^<!--.*-->\s*$")


@dataclass
class Block:
    page: str
    line: int
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of a page with the marker comments written just above each one."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        markers: dict[str, str] = {}
        j = i - 1
        while j >= 0 and ANY_COMMENT.match(lines[j]):
            marker = MARKER.match(lines[j])
            assert marker, f"{path.name}:{j + 1}: unknown marker {lines[j]!r} (file:, expect:, run:, output)"
            markers[marker.group(1)] = marker.group(2) or ""
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        assert end < len(lines), f"{path.name}:{i + 1}: the fence is never closed"
        blocks.append(Block(path.name, i + 1, opening.group(1), "\n".join(lines[i + 1:end]) + "\n", markers))
        i = end + 1
    return blocks


def taskdsl(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "taskdsl", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_the_guide_has_its_pages():
    names = {path.name for path in PAGES}
    assert {"README.md", "install.md", "first-template.md", "language.md", "running.md", "editors.md"} <= names


def test_every_marker_belongs_to_a_block_it_fits():
    for page in PAGES:
        for block in blocks_of(page):
            where = f"{block.page}:{block.line}"
            if block.lang == "xml":
                assert "output" not in block.markers, f"{where}: `output` marks a ```text block"
                assert not ("expect" in block.markers and "run" in block.markers), \
                    f"{where}: a block that shows a mistake cannot run"
            elif block.lang == "text":
                assert set(block.markers) <= {"output"}, f"{where}: a ```text block takes only `output`"
            else:
                assert set(block.markers) <= {"file"}, f"{where}: other blocks take only `file:`"


def failures_of(page: Path, project: Path) -> list[str]:
    """Check (and run) every template of a page in the folder `project`; what differs from the page."""
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    tmp_path = project
    last_run: tuple[Block, str | None] | None = None
    failures: list[str] = []
    for block in blocks_of(page):
        where = f"{block.page}:{block.line}"
        if block.lang == "text" and "output" in block.markers:
            assert last_run is not None, f"{where}: an output block with no run block before it"
            ran, stdout = last_run
            if stdout is None:
                failures.append(f"{where}: the block of line {ran.line} did not run")
            elif stdout.rstrip("\n") != block.text.rstrip("\n"):
                failures.append(f"{where}: the run of line {ran.line} printed\n{stdout}\nthe guide shows\n{block.text}")
            last_run = None
            continue
        if block.lang != "xml":
            if "file" in block.markers:  # a project file the next templates use (taskdsl.toml, inputs.json)
                (tmp_path / block.markers["file"]).write_text(block.text, encoding="utf-8")
            continue
        name = block.markers.get("file") or "example.task.xml"
        assert re.fullmatch(r"[\w.-]+\.task\.xml", name), f"{where}: file: takes a name like greet.task.xml"
        (tmp_path / name).write_text(block.text, encoding="utf-8")
        last_run = (block, None) if "run" in block.markers else None

        checked = taskdsl(tmp_path, "check", "--format", "json", name)
        codes = [d["code"] for d in json.loads(checked.stdout)] if checked.stdout.strip().startswith("[") else None
        expected = block.markers.get("expect", "").split()
        if codes != expected:
            failures.append(f"{where}: check reports {codes} (expected {expected or 'nothing'})\n"
                            f"{checked.stdout}{checked.stderr}")
            continue
        if "run" in block.markers:
            ran = taskdsl(tmp_path, "run", name, "--model", "taskdsl/echo", "-q", *shlex.split(block.markers["run"]))
            if ran.returncode != 0:
                failures.append(f"{where}: run exits {ran.returncode}\n{ran.stdout}{ran.stderr}")
            last_run = (block, ran.stdout)
        if name == "example.task.xml":
            (tmp_path / name).unlink()
    return failures


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_templates_check_and_run_as_shown(page, tmp_path):
    failures = failures_of(page, tmp_path)
    assert not failures, "\n\n".join(failures)


def test_the_harness_reports_a_wrong_output_and_a_wrong_code(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- run: --input who=Ada -->\n```xml\n<task><instructions>Hi {{who}}</instructions>"
        "<inputs><input name=\"who\"/></inputs></task>\n```\n\n<!-- output -->\n```text\nHi Bob\n```\n\n"
        "<!-- expect: TD501 -->\n```xml\n<task><instructions>{{nope}}</instructions></task>\n```\n",
        encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    failures = failures_of(page, project)
    assert len(failures) == 2
    assert failures[0].startswith("page.md:7: the run of line 2 printed\nHi Ada\n")
    assert failures[1].startswith("page.md:12: check reports ['TD402'] (expected ['TD501'])")


CITATION = re.compile(r"SPEC|§|\b[Ii]ssues? [0-9]|(?:^|[^&\w])#[0-9]+\b")


def test_docs_cite_no_spec_sections_or_issue_numbers():
    """Readers of the repository cannot see the spec or the issue tracker: docs describe behaviour."""
    repo = GUIDE.parents[1]
    pages = [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]
    cited = [f"{page.relative_to(repo)}:{number}: {line.strip()}"
             for page in pages
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             if CITATION.search(line)]
    assert cited == []
    assert CITATION.search("the operator defaults (SPEC §4)") and CITATION.search("fixed in #12")
    assert not CITATION.search("[TD001](#td001) and &#10;")


LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_the_guide_links_lead_somewhere():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []
