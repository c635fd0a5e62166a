"""Everything taskdsl writes goes through taskdsl.support.files: never through a planted link, never
a hard-linked file, never under a predictable name in the shared temporary folder; 0600 where model
output may be; secrets masked before XML escaping."""

import os
import stat

import pytest

from taskdsl.cli.main import main

SHOUT = """<library>
  <task name="shout" type="script">
    <description>Say a word</description>
    <command>printf '%s' "$TASKDSL_INPUT_WORD"</command>
    <inputs><input name="word"/></inputs>
  </task>
</library>
"""
SECRET = 'S3cr&t<Pa55>w0rd"x'
TESTS = f"""<tests>
  <test name="leaks" task="shout">
    <input name="word">{SECRET.replace('&', '&amp;').replace('<', '&lt;').replace('"', '&quot;')}</input>
    <expect test='output == "nothing"'/>
  </test>
</tests>
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text(SHOUT, encoding="utf-8")
    (tmp_path / "shout.test.xml").write_text(TESTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def victim(folder):
    path = folder / "victim.txt"
    path.write_text("precious", encoding="utf-8")
    os.chmod(path, 0o644)
    return path


def untouched(path) -> bool:
    return path.read_text(encoding="utf-8") == "precious" and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_junit_through_a_planted_link_replaces_the_link_not_the_file_and_is_0600(project, capsys, tmp_path_factory):
    target = victim(tmp_path_factory.mktemp("other"))
    report = project / "junit.xml"
    report.symlink_to(target)
    code, _, _ = run(capsys, "test", "--junit", str(report))
    assert code == 1
    assert untouched(target)
    assert not report.is_symlink() and "<testsuites" in report.read_text(encoding="utf-8")
    assert stat.S_IMODE(report.stat().st_mode) == 0o600


def test_a_secret_is_masked_in_junit_before_xml_escaping(project, capsys):
    code, out, _ = run(capsys, "test", "--format", "junit", "--junit", "j.xml")
    written = (project / "j.xml").read_text(encoding="utf-8")
    for text in (out, written):
        assert "***" in text
        assert "S3cr" not in text and "Pa55" not in text and "w0rd" not in text


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_trace_is_never_written_through_a_link(project, capsys, tmp_path_factory, kind):
    target = victim(tmp_path_factory.mktemp("other") if kind == "symlink" else project)
    trace = project / "run.trace.jsonl"
    (trace.symlink_to if kind == "symlink" else trace.hardlink_to)(target)
    code, out, err = run(capsys, "run", "lib.task.xml", "--task", "shout", "--input", "word=a", "--trace", str(trace))
    assert code != 0
    assert "run.trace.jsonl" in err and ("symbolic link" in err or "hard links" in err)
    assert untouched(target)


def test_a_trace_file_is_created_0600(project, capsys):
    code, _, _ = run(capsys, "run", "lib.task.xml", "--task", "shout", "--input", "word=a", "--trace", "t.jsonl")
    assert code == 0
    assert stat.S_IMODE((project / "t.jsonl").stat().st_mode) == 0o600
