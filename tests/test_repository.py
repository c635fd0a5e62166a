"""The repository itself: what a fresh clone must not carry."""

import subprocess

import pytest

from paths import REPO


def test_no_symbolic_link_is_tracked():
    # a local setup link (the editors' install folder) committed by mistake replaces that folder
    # with a link to itself in every checkout that merges it
    listed = subprocess.run(["git", "ls-files", "-s"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout (an unpacked sdist)")
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000 ")]
    assert links == []


CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ", "||||||| ")


def conflict_markers(files: dict[str, str]) -> list[str]:
    """path:line of every line a merge left behind (a marker at the start of a line: `<<<<<<< `,
    `=======` alone, `>>>>>>> `, `||||||| `)."""
    found = []
    for path, text in files.items():
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith(CONFLICT_MARKERS[0]) or line.rstrip() == CONFLICT_MARKERS[1] \
                    or line.startswith(CONFLICT_MARKERS[2]) or line.startswith(CONFLICT_MARKERS[3]):
                found.append(f"{path}:{number}: {line[:40]}")
    return found


def tracked_texts() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout (an unpacked sdist)")
    texts = {}
    for name in listed.stdout.decode().split("\0"):
        path = REPO / name
        if not name or not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary: images, fonts
            continue
        texts[name] = data.decode("utf-8", errors="replace")
    return texts


def test_no_merge_conflict_marker_is_left_anywhere():
    assert conflict_markers(tracked_texts()) == []


def test_the_marker_check_sees_each_kind_of_marker():
    text = "a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> branch\nz\n"
    assert conflict_markers({"doc.md": text}) == [
        "doc.md:2: <<<<<<< HEAD", "doc.md:4: ||||||| base", "doc.md:6: =======", "doc.md:8: >>>>>>> branch"]
    # a Markdown setext heading underline or a ruler of other lengths is not a marker
    assert conflict_markers({"doc.md": "Title\n=====\n========\n"}) == []
