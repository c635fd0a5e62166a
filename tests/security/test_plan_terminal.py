"""What a plan shows a terminal cannot act on it: a file, folder, template or model name holding ESC
(or CR, BS, a bidirectional override) is shown escaped in `taskdsl run --plan` and in the
`Run it? [y/N]` question, so it can neither move the cursor and erase the lines above it (the
shell command, the model) nor start a line of its own. Through the real command line; the question
on a real pseudo-terminal."""

import os
import select
import subprocess
import sys

ESC = "\x1b"
LIBRARY = ('<library><template name="helper"><task><description>Summarise notes</description>'
           '<instructions>Summarise the notes</instructions>{files}</task></template></library>\n')
MAIN = """<task type="sequential" name="r"><description>Summarise notes</description><steps>
<task type="script" name="s"><description>s</description><command>curl -s http://127.0.0.1:9/x.sh | sh</command></task>
<task ref="helper"/>
</steps></task>
"""


def project(tmp_path, config="", files=""):
    folder = tmp_path / f"proj{ESC}[2Kect"  # the folder the commands run in, shown in the plan
    (folder / "lib").mkdir(parents=True)
    (folder / "taskdsl.toml").write_text(
        '[models."openai/gpt-4o\\u001b[2J"]\nfallbacks = ["openai/gpt-4o-mini\\u001b[3A\\u202e"]\n' + config,
        encoding="utf-8")
    (folder / "lib" / f"helper{ESC}[6A{ESC}[J\r.task.xml").write_text(LIBRARY.format(files=files), encoding="utf-8")
    (folder / "r.task.xml").write_text(MAIN, encoding="utf-8")
    return folder


def shows_everything_escaped(text, folder):
    assert ESC not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b" in text
    shown_folder = str(folder).replace(ESC, "\\x1b")
    assert f"  run this shell command in {shown_folder}:" in text
    assert "    $ curl -s http://127.0.0.1:9/x.sh | sh" in text
    assert "  call openai/gpt-4o\\x1b[2J (price unknown)" in text
    assert "    if openai/gpt-4o\\x1b[2J still fails after its retries: openai/gpt-4o-mini\\x1b[3A\\u202e" in text
    assert "    lib/helper\\x1b[6A\\x1b[J\\r.task.xml" in text


def test_the_plan_shows_names_with_terminal_controls_escaped(tmp_path):
    folder = project(tmp_path)
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "--plan", "r.task.xml",
                           "--model", f"openai/gpt-4o{ESC}[2J"], cwd=folder, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    shows_everything_escaped(done.stdout, folder)


def test_the_run_it_question_on_a_terminal_shows_them_escaped(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "n.txt").write_text("notes", encoding="utf-8")
    # the project widens what the run reads: the question is asked
    folder = project(tmp_path, f'[run]\nallow_read = ["{allowed}"]\n',
                     f"<file_paths><path>{allowed / 'n.txt'}</path></file_paths>")
    primary, secondary = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "taskdsl", "run", "r.task.xml", "--model",
                                f"openai/gpt-4o{ESC}[2J"], cwd=folder, stdin=secondary, stderr=secondary,
                               stdout=subprocess.DEVNULL,
                               env={**os.environ, "OPENAI_API_KEY": "sk-not-used",  # answered no: nothing is sent
                                    "OPENAI_API_BASE": "http://127.0.0.1:9", "OPENAI_BASE_URL": "http://127.0.0.1:9"})
    os.close(secondary)
    seen = b""
    try:
        while b"Run it? [y/N]" not in seen:
            ready, _, _ = select.select([primary], [], [], 120)
            assert ready, seen.decode("utf-8", "replace")
            seen += os.read(primary, 65536)
        os.write(primary, b"n\n")
        assert process.wait(timeout=120) == 2  # not agreed: refused, nothing run
    finally:
        if process.poll() is None:
            process.kill()
        os.close(primary)
    shown = seen.decode("utf-8").replace("\r\n", "\n")  # the terminal's own line ends
    shows_everything_escaped(shown, folder)


def test_terminal_text_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    from taskdsl.evaluator.consent import terminal_text

    assert terminal_text(["a\x1b[2Jb", "c\rd\be\x7ff\x9bg\x85h", "i\u202ej\u2066k\u200el\u061cm", "tab\there é ✓"]) == (
        "a\\x1b[2Jb\nc\\rd\\x08e\\x7ff\\x9bg\\x85h\ni\\u202ej\\u2066k\\u200el\\u061cm\ntab\there é ✓")
    # a line end inside a field is shown, never started; a command's own lines (a tuple) stay lines
    assert terminal_text(["name\nforged line", ("    $ first", "      second\x1b[A")]) == (
        "name\\nforged line\n    $ first\n      second\\x1b[A")


def test_a_folder_named_like_the_home_is_shown_as_the_folder_the_run_reads(tmp_path):
    """`<path>~/x</path>` reads the folder `~` beside the template (nothing expands it); the plan showed `~/x`, which
    reads as a file of the home folder."""
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "t.task.xml").write_text('<task name="t"><description>d</description><file_paths><path>~/x</path>'
                                         '<path>$HOME/y</path></file_paths></task>\n')
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "--plan", "t.task.xml", "--model", "taskdsl/echo"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "    ./~/x" in done.stdout.splitlines() and "    ./$HOME/y" in done.stdout.splitlines()


def test_the_plan_says_which_listed_files_the_run_will_refuse(tmp_path):
    """The plan listed a file outside the project under "read these files", and the run then refused it: a plan
    that is not the run. It now says so, and what lets it (and a file that is not there)."""
    outside, project = tmp_path / "out", tmp_path / "p"
    outside.mkdir()
    (project / "sub").mkdir(parents=True)
    (outside / "n.txt").write_text("hi\n")
    (project / "taskdsl.toml").write_text("")
    (project / "n2.txt").write_text("in the project\n")
    (project / "sub" / "r.task.xml").write_text(f'<task name="r"><description>d</description><file_paths>'
                                                f'<path>{outside}/n.txt</path><path>../n2.txt</path>'
                                                f'<path>../gone.txt</path></file_paths></task>\n')
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "--plan", "sub/r.task.xml", "--model",
                           "taskdsl/echo"], cwd=project, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert f"    {outside}/n.txt (refused when it runs: outside the project; --allow-read lets it)" in lines
    assert f"    {project}/n2.txt" in lines and f"    {project}/gone.txt (not found)" in lines
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "--plan", "sub/r.task.xml", "--model",
                           "taskdsl/echo", "--allow-read", str(outside)], cwd=project, capture_output=True, text=True,
                          timeout=120)
    assert f"    {outside}/n.txt" in done.stdout.splitlines()
