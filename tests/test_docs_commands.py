"""Every command the docs show with its output is run, and prints what the docs say.

A ```console block in docs/ (docs/guide/ too) or README.md holds commands (lines starting `$ `) each
followed by the output it prints (stdout and stderr together, as a terminal shows them). The commands
run with `bash` in a copy of the repository's bundled examples (`examples/` under a folder with the
repository's pyproject.toml; for the guide's pages and a page marked `<!-- docs: a new project -->`,
a new empty project),
beside the files the page saves with `<!-- file: NAME -->` above the block, one
block's commands one after the other in the same folder, with
the installed `taskdsl` first on PATH and no TASKDSL_* variable but those the command sets.

Compared after normalising what changes from run to run: a duration (`0.21s`, `1.5 s`) is
`0.00s`; the copy's folder is removed from paths. In the docs' text, `…` inside a line stands for
any text, a line that is only `…` for any number of lines (or none), and a last line `(exit N)`
says the command exits N (otherwise it must exit 0).

So a page cannot show output the program does not print: the sample is the program's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from markdown_fences import fences
from paths import REPO

PAGES = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]
DURATION = re.compile(r"\b\d+(?:\.\d+)? ?s\b")
EXIT = re.compile(r"^\(exit (\d+)\)$")


@dataclass
class Command:
    page: str
    line: int
    command: str
    expected: list[str]
    exit_code: int


NEW_PROJECT = "<!-- docs: a new project -->"  # a page whose commands start in an empty project
FILE_MARKER = re.compile(r"^<!--\s*file:\s*(\S+)\s*-->\s*$")


def page_files(path: Path, before: int) -> dict[str, str]:
    """The blocks a page saves under a name (`<!-- file: NAME -->` just above the fence, as the
    guide's pages do) above line `before`, the last of each name: a console block's commands see
    them in their folder, as the page has written them so far."""
    files = {}
    for fence in fences(path):
        for comment in fence.above:
            if (marker := FILE_MARKER.match(comment)) and fence.line < before:
                files[marker.group(1)] = "\n".join(fence.body) + "\n"
    return files


def console_blocks(path: Path) -> list[list[Command]]:
    """The ```console blocks of a page, each as its commands with their expected output."""
    blocks = []
    for fence in fences(path):
        if fence.language != "console":
            continue
        commands: list[Command] = []
        for number, text in enumerate(fence.body, start=fence.line + 1):
            if text.startswith("$ "):
                commands.append(Command(path.relative_to(REPO).as_posix(), number, text[2:], [], 0))
            elif text.startswith("  ") and commands and not commands[-1].expected and commands[-1].command.endswith("\\"):
                commands[-1].command += "\n" + text  # a command continued on the next line
            else:
                assert commands, f"{path.name}:{number}: output before any `$ ` command"
                commands[-1].expected.append(text)
        for command in commands:
            if command.expected and (code := EXIT.match(command.expected[-1])):
                command.exit_code = int(code.group(1))
                command.expected.pop()
        blocks.append(commands)
    return blocks


BLOCKS = [(page, block) for page in PAGES for block in console_blocks(page)]


def normalised(text: str, folder: Path) -> list[str]:
    text = text.replace(str(folder) + os.sep, "").replace(str(folder), ".")
    return [DURATION.sub("0.00s", line.rstrip()) for line in text.splitlines()]


def pattern(expected: list[str]) -> re.Pattern:
    """The expected lines as one regex: `…` any text within a line, a lone `…` any lines."""
    parts = []
    for line in expected:
        line = DURATION.sub("0.00s", line.rstrip())
        if line == "…":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("…")) + r"\n")
    return re.compile("".join(parts))


@pytest.fixture
def examples(tmp_path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(REPO / "examples", folder / "examples")
    shutil.copy(REPO / "pyproject.toml", folder / "pyproject.toml")  # the project's root, as in the checkout
    return folder


def environment(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKDSL_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "80"  # usage text wraps at the width of a standard terminal
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as a terminal shows them
    return env


def test_the_docs_show_commands_with_their_output():
    pages = {page.name for page, _ in BLOCKS}
    assert {"testing.md", "graph.md", "task-system.md", "preview.md", "running.md", "configuration.md",
            "README.md"} <= pages, pages
    assert sum(len(block) for _, block in BLOCKS) >= 10


@pytest.mark.parametrize("page, block", BLOCKS, ids=[f"{p.relative_to(REPO)}:{b[0].line}" for p, b in BLOCKS])
def test_each_command_prints_what_the_docs_show(page, block, examples, tmp_path):
    if page.parent.name == "guide" or NEW_PROJECT in page.read_text(encoding="utf-8"):
        # the guide works in a new project of its own (first-template.md); so does a page that says so
        examples = tmp_path / "first"
        examples.mkdir()
        (examples / "taskdsl.toml").write_text("")
    for name, text in page_files(page, block[0].line).items():
        (examples / name).parent.mkdir(parents=True, exist_ok=True)
        (examples / name).write_text(text, encoding="utf-8")
    for command in block:
        done = subprocess.run(["bash", "-c", command.command], cwd=examples, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=300, env=environment(tmp_path))
        shown = "".join(line + "\n" for line in normalised(done.stdout, examples))
        where = f"{command.page}:{command.line}: $ {command.command}"
        assert done.returncode == command.exit_code, f"{where}\nexit {done.returncode}\n{shown}"
        assert pattern(command.expected).fullmatch(shown), f"{where}\nthe docs show:\n" + \
            "\n".join(command.expected) + f"\nit prints:\n{shown}"


def test_the_pattern_is_strict():
    """A page whose sample differs from what is printed fails: one word, one line, one line too many."""
    assert pattern(["9 passed, 0 failed"]).fullmatch("9 passed, 0 failed\n")
    assert not pattern(["9 passed, 0 failed"]).fullmatch("7 passed, 1 failed\n")
    assert not pattern(["a"]).fullmatch("a\nb\n")
    assert pattern(["a", "…", "c"]).fullmatch("a\nb\nb\nc\n") and pattern(["a", "…", "c"]).fullmatch("a\nc\n")
    printed = "".join(line + "\n" for line in normalised("✓ x (script, 2.50s)", REPO / "nowhere"))
    assert pattern(["✓ x (script, 0.01s)"]).fullmatch(printed)
    assert pattern(["took … in all"]).fullmatch("took 3 files in all\n")


def test_output_is_shown_only_in_console_blocks():
    """A command's output shown beside it (an output block right after a shell block) is not
    executed: it must be a ```console block (the guide's `<!-- output -->` blocks are run by
    test_guide.py)."""
    loose = []
    for page in PAGES:
        blocks = fences(page)
        for before, after in zip(blocks, blocks[1:]):
            shows_output = after.language in ("", "text") and not any("output" in comment for comment in after.above)
            if before.language in ("sh", "shell", "bash") and shows_output and any("taskdsl" in b for b in before.body):
                loose.append(f"{page.relative_to(REPO)}:{after.line}")
    assert loose == []
