"""A repository's globs cannot hold the editor or `taskdsl check`: a regex of `[^/]*a[^/]*a…b` backtracks
exponentially (12 stars against a 40-letter name: 228 s), and a taskdsl.toml `files` glob or a `.gitignore`
line of that shape hung `taskdsl check .` and the language server (no diagnostics for any document). `files`
globs are matched by an automaton in linear time (taskdsl.project.globs); a `.gitignore`/`exclude` line with
more than two single `*` (pathspec's regexes backtrack) is not applied."""

import os
import re
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from taskdsl.project.globs import compile_glob, costly_gitignore_line

TEMPLATE = '<task><description>d</description></task>\n'


def cli(folder, *args):
    # the timeout only stops the hang the guard prevents; no assertion is about time
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120, env={k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"})


def test_a_files_glob_of_many_stars_checks_the_project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text('files = ["' + "*a" * 18 + '*b", "*.task.xml"]\n')
    (tmp_path / ("a" * 60)).write_text("")
    (tmp_path / "t.task.xml").write_text(TEMPLATE)
    done = cli(tmp_path, "check", ".")
    assert (done.returncode, done.stderr) == (0, "0 errors, 0 warnings in 1 file\n")


def test_a_gitignore_line_of_many_stars_is_not_applied(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*a*b\nignored/\n")
    (tmp_path / ("a" * 40)).mkdir()
    (tmp_path / ("a" * 40) / "u.task.xml").write_text(TEMPLATE)
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "v.task.xml").write_text(TEMPLATE)
    (tmp_path / "t.task.xml").write_text(TEMPLATE)
    done = cli(tmp_path, "check", ".")
    assert (done.returncode, done.stderr) == (0, "0 errors, 0 warnings in 2 files\n")  # the other line still applies
    assert costly_gitignore_line("*a*a*b") and not costly_gitignore_line("**/*.py[cod]") \
        and not costly_gitignore_line("*.egg-info/*") and not costly_gitignore_line("**/*.egg-info/**")
    assert costly_gitignore_line("*a**a**a**b")  # pathspec reads a `**` inside a name as `*`
    assert costly_gitignore_line("**/a/**/a/**/a/**/b") and not costly_gitignore_line("**/build/**")


def test_a_gitignore_line_of_double_stars_inside_a_name_is_not_applied(tmp_path):
    (tmp_path / "taskdsl.toml").write_text('exclude = ["' + "*a*" * 6 + '*b"]\n')
    (tmp_path / ".gitignore").write_text("*a" + "**a" * 10 + "**b\n")
    (tmp_path / ("a" * 40)).mkdir()
    (tmp_path / ("a" * 40) / "u.task.xml").write_text(TEMPLATE)
    done = cli(tmp_path, "check", ".")
    assert (done.returncode, done.stderr) == (0, "0 errors, 0 warnings in 1 file\n")


def test_a_gitignore_applies_its_first_thousand_patterns(tmp_path):
    """44,000 cheap lines made every path checked cost 44,000 regex matches (`taskdsl check .` 16.5 s, the
    server's first diagnostics 25.8 s): the first 1,000 patterns apply (comments and blank lines do not
    count), the rest do not (the files they name are checked)."""
    from taskdsl.project.workspace import MAX_GITIGNORE_PATTERNS, _gitignore_spec

    lines = ["# generated", "", "first/"] + [f"**/x{n}*y*/**/z{n}" for n in range(MAX_GITIGNORE_PATTERNS - 1)]
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / ".gitignore").write_text("\n".join(lines + ["last/"]) + "\n")
    for folder in ("first", "last"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "t.task.xml").write_text(TEMPLATE)
    done = cli(tmp_path, "check", ".")
    assert (done.returncode, done.stderr) == (0, "0 errors, 0 warnings in 1 file\n")  # last/ is checked
    assert len(_gitignore_spec(lines + ["last/"]).patterns) == MAX_GITIGNORE_PATTERNS == 1_000


def reference(pattern: str) -> re.Pattern:
    """What a `files` glob means, as a regex (what taskdsl compiled before: right, but exponential)."""
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "/", ".", "*", "**", "**/", "?"]), max_size=7).map("".join),
       st.text(alphabet="ab/.", max_size=10))
def test_the_automaton_matches_what_the_glob_means(pattern, path):
    assert compile_glob(pattern).match(path) == bool(reference(pattern).match(path))


def test_classes_and_escapes():
    assert compile_glob("*.py[cod]").match("x.pyc") and not compile_glob("*.py[cod]").match("x.pyx")
    assert compile_glob("[!a]*").match("b.txt") and not compile_glob("[!a]*").match("a.txt")
    assert compile_glob(r"\*.md").match("*.md") and not compile_glob(r"\*.md").match("x.md")
    assert not compile_glob("[a-c]").match("/")


def test_a_glob_of_one_name_is_matched_on_the_last_name_and_means_what_the_automaton_means():
    """`**/*.task.xml` (the default) tests the path's last name: the automaton walked every character of every
    path (2,000 files 15 folders of 250 characters deep held `taskdsl check` a minute). Same meaning."""
    from taskdsl.project.globs import Glob, NameGlob, _automaton

    paths = ["a.task.xml", "x/a.task.xml", "x/y/.task.xml", "a.task.xmlx", "x/a.task", "/a.task.xml", "x/",
             "x" * 250 + "/" + "y" * 250 + "/z.task.xml", "pre-mid.suf", "d/pre.suf", "pre.suf/x"]
    for pattern in ("**/*.task.xml", "*.task.xml", "**/pre*.suf", "pre*.suf", "**/*"):
        fast = compile_glob(pattern)
        assert isinstance(fast, NameGlob), pattern
        slow = _automaton(pattern)
        assert isinstance(slow, Glob)
        assert [fast.match(p) for p in paths] == [slow.match(p) for p in paths], pattern
        assert [fast.match(p) for p in paths] == [bool(reference(pattern).fullmatch(p)) for p in paths], pattern
