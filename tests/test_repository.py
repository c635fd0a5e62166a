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
