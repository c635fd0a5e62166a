"""The shell holes left after the second review, each through the real CLI: programs that parse a value again
behind wrappers, attached or combined flags and settings (TD803), option position of programs whose options run
commands (TD805, an error there), line continuations inside a word (TD804). Before the fix `taskdsl check`
reported no error for each refused command below and `taskdsl run --input x=…` ran it."""

import os

import pytest

from taskdsl.cli.main import main

SCRIPT = """<task type="script" name="s">
  <command>{command}</command>
  <inputs><input name="x">placeholder</input></inputs>
</task>
"""


def template(folder, command):
    path = os.path.join(folder, "t.task.xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCRIPT.format(command=command.replace("&", "&amp;").replace("<", "&lt;")))
    return path


def refused(tmp_path, capsys, monkeypatch, command, value, code, message):
    """check reports code with message; run refuses (exit 2) with the same code; the value runs nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command)
    capsys.readouterr()
    assert main(["check", path]) == 1
    out = capsys.readouterr()
    assert f"error {code} " in out.out + out.err
    assert message in out.out + out.err
    assert main(["run", path, "--input", f"x={value}"]) == 2
    out = capsys.readouterr()
    assert code in out.out + out.err
    assert not (tmp_path / "marker").exists()


def ran(tmp_path, capsys, monkeypatch, command, value):
    """check is clean of errors; run succeeds; what the command wrote to out."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command)
    capsys.readouterr()
    assert main(["check", path]) == 0, capsys.readouterr()
    assert main(["run", path, "--input", f"x={value}"]) == 0, capsys.readouterr()
    assert not (tmp_path / "marker").exists()
    return (tmp_path / "out").read_text()


REPARSE = "the value would become code"
HOSTILE = "x; touch marker #"


@pytest.mark.parametrize("command, program", [
    # wrappers, peeled one after another whatever their options
    ('ionice -c 3 sh -c "echo {{x}}"', "sh"),
    ('taskset 1 sh -c "echo {{x}}"', "sh"),
    ('flock lock -c "echo {{x}}"', "flock"),
    ('flock lock sh -c "echo {{x}}"', "sh"),
    ('script -q -c "echo {{x}}" /dev/null', "script"),
    ('nice -n 5 sh -c "echo {{x}}"', "sh"),
    ('chrt 0 sh -c "echo {{x}}"', "sh"),
    ('stdbuf -o0 sh -c "echo {{x}}"', "sh"),
    ('setsid sh -c "echo {{x}}"', "sh"),
    ('nohup sh -c "echo {{x}}"', "sh"),
    ('command sh -c "echo {{x}}"', "sh"),
    ('exec sh -c "echo {{x}}"', "sh"),
    ('time sh -c "echo {{x}}"', "sh"),
    ('nice timeout 5 env A=1 stdbuf -oL sh -c "echo {{x}}"', "sh"),
    # shells by path, through env and busybox; combined flags
    ('/bin/sh -c "echo {{x}}"', "sh"),
    ('/usr/bin/env bash -c "echo {{x}}"', "bash"),
    ('busybox sh -c "echo {{x}}"', "sh"),
    ('dash -c "echo {{x}}"', "dash"),
    ('bash -xc "echo {{x}}"', "bash"),
    ('sh -ec "echo {{x}}"', "sh"),
    ('sh -o errexit -c "echo {{x}}"', "sh"),
    # interpreters: combined and attached code flags
    ('python3 -Ic "print(1)\n{{x}}"', "python3"),
    ('python3 -Sc "{{x}}"', "python3"),
    ("python3 -c{{x}}", "python3"),
    ('perl -le "{{x}}"', "perl"),
    ("node -pe {{x}}", "node"),
    ("awk -e {{x}} /dev/null", "awk"),
    ("awk --source={{x}} /dev/null", "awk"),
    # settings and options whose value is a command
    ("ssh -o ProxyCommand={{x}} host true", "ssh"),
    ("ssh -oProxyCommand={{x}} host true", "ssh"),
    ("git -c alias.x=!{{x}} x", "git"),
    ("git -c core.sshCommand={{x}} fetch", "git"),
    ("tar --use-compress-program={{x}} -cf a.tar t.task.xml", "tar"),
    ("tar -I {{x}} -cf a.tar t.task.xml", "tar"),
    ("tar --to-command={{x}} -xf a.tar", "tar"),
    ("tar --checkpoint-action=exec={{x}} -cf a.tar t.task.xml", "tar"),
    ("rsync -e {{x}} t.task.xml host:", "rsync"),
    ("env -S {{x}}", "env"),
    # standard input read as code, after options
    ("printf '%s' {{x}} | bash -e", "bash"),
    ("printf '%s' {{x}} | python3 -u -", "python3"),
    ("python3 -u - <<EOF\n{{x}}\nEOF", "python3"),
    ("printf '%s' {{x}} | xargs -I{} sh -c {}", "sh"),
    ("printf '%s' {{x}} | xargs -I{} sh -c 'echo {}'", "sh"),
    ("printf '%s' {{x}} | xargs sh -c", "sh"),
    ("find . -maxdepth 0 -exec awk {{x}} {} +", "awk"),
    # more programs of the table: other shells, database clients, debuggers, job schedulers
    ("fish -c {{x}}", "fish"),
    ("sqlite3 notes.db {{x}}", "sqlite3"),
    ("psql -c {{x}}", "psql"),
    ("gdb -ex {{x}} /bin/true", "gdb"),
    ("printf '%s' {{x}} | at now", "at"),
    ("unshare -r sh -c {{x}}", "sh"),
    # a script file that is the program's own standard input; bash builtins that expand or run a value
    ("printf '%s' {{x}} | bash /dev/stdin", "bash"),
    ("printf '%s' {{x}} | sh /dev/fd/0", "sh"),
    ("printf '%s' {{x}} | . /dev/stdin", "."),
    ("printf '%s' {{x}} | python3 /dev/stdin", "python3"),
    ("compgen -W {{x}}", "compgen"),
    ("printf '%s' {{x}} | sh -c sh", "sh"),
    ("printf '%s' {{x}} | sh -c 'cat | sh'", "sh"),
    ("printf '%s' {{x}} | su -c sh", "su"),
    ("S=sh; printf '%s' {{x}} | sh -c \"$S\"", "sh"),
    ("python3 -m timeit {{x}}", "python3 -m timeit"),
    ("printf '%s' {{x}} | mapfile -C eval -c 1", "mapfile"),
])
def test_a_value_a_program_parses_again_is_td803(tmp_path, capsys, monkeypatch, command, program):
    value = "print(1); import os; os.system('touch marker')" if "python" in command else HOSTILE
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", f"`{program}` parses again as code")


@pytest.mark.parametrize("command, shown", [
    ('"$SHELL" -c "echo {{x}}"', '"$SHELL"'),
    ("S=sh; $S -c {{x}}", "$S"),
    ("{{x}} -c {{x}}", "{{…}}"),
])
def test_a_program_named_at_run_time_fails_closed(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is an argument of a program named at run time (`{shown}`)")


@pytest.mark.parametrize("command, value", [
    ("tar -cf out.tar {{x}} t.task.xml", "--checkpoint=1 --checkpoint-action=exec=touch marker"),
    ("find {{x}} -maxdepth 0", "-exec touch marker ;"),
    ("git {{x}} --version", "--exec-path=."),
    ("tar czf out.tgz {{x}}", "--checkpoint=1 --checkpoint-action=exec=touch marker"),
    ("tar -cf out.tar --{{x}} t.task.xml", "checkpoint-action=exec=touch marker"),
])
def test_option_position_of_a_program_whose_options_run_commands_is_an_error(tmp_path, capsys, monkeypatch,
                                                                            command, value):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD805", "put -- before it")


def test_the_double_dash_fix_makes_the_value_an_operand(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, "tar -cf out.tar {{x}}")
    assert main(["check", "--fix", path]) == 0
    assert "<command>tar -cf out.tar -- {{x}}</command>" in open(path, encoding="utf-8").read()
    assert main(["run", path, "--input", "x=--checkpoint=1 --checkpoint-action=exec=touch marker"]) != 0
    assert not (tmp_path / "marker").exists()  # tar looked for a file of that name


@pytest.mark.parametrize("command, value, expected", [
    ("sh -c 'printf \"[%s]\" \"$1\" > out' _ {{x}}", HOSTILE, f"[{HOSTILE}]"),
    ("nice -n 1 flock lock sh -c 'printf \"[%s]\" \"$1\" > out' _ {{x}}", HOSTILE, f"[{HOSTILE}]"),
    ("python3 -Ic 'import sys; open(\"out\", \"w\").write(sys.argv[1])' {{x}}", HOSTILE, HOSTILE),
    ("printf '[%s]' \\\n  {{x}} > out", "a\\\nb", "[a\\\nb]"),
])
def test_the_safe_forms_run_with_the_value_as_one_word(tmp_path, capsys, monkeypatch, command, value, expected):
    assert ran(tmp_path, capsys, monkeypatch, command, value) == expected


CONTINUATION = "a line continuation (\\ at the end of a line) joins two parts of a word here"


@pytest.mark.parametrize("command, value", [
    ("printf '[%s]' $(\\\n( {{x}} )) > out", "a[$(touch marker)]"),
    ('printf "[%s]" "$\\\n{{x}}" > out', "touch marker"),
    ("printf '[%s]' a\\\n{{x}} > out", "touch marker"),
])
def test_a_line_continuation_inside_a_word_is_td804(tmp_path, capsys, monkeypatch, command, value):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD804", CONTINUATION)


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} &> out",
    "a=({{x}} b); printf '%s' \"${a[0]}\" > out",
    "cat <<< {{x}} > out",
    "diff <(printf '%s' {{x}}) /dev/null > out",
    "function f { printf '%s' {{x}} > out; }; f",
])
def test_bash_only_syntax_under_sh_never_runs_the_value(tmp_path, capsys, monkeypatch, command):
    """Commands run with /bin/sh -c (dash on Debian and Ubuntu), read with bash's grammar: bash-only syntax
    the checker accepts fails or means something else there, but the value stays a word."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command)
    assert main(["check", path]) == 0
    main(["run", path, "--input", "x=$(touch marker)`touch marker`; touch marker"])
    assert not (tmp_path / "marker").exists()


def test_one_double_dash_fixes_every_value_of_a_command(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, "rsync -a {{x}} {{x}}.bak")
    assert main(["check", "--fix", path]) == 0
    assert "<command>rsync -a -- {{x}} {{x}}.bak</command>" in open(path, encoding="utf-8").read()


@pytest.mark.parametrize("command", ["git commit -m {{x}}", "git -C {{x}} status", "awk '{ print }' {{x}}",
                                     "python3 -c 'import sys; print(sys.argv)' {{x}}", "tar xf {{x}}",
                                     "ssh -o ConnectTimeout={{x}} host true", "git -c user.name={{x}} status",
                                     "awk -f /dev/null -- {{x}}"])
def test_values_that_are_an_options_argument_or_after_the_script_are_not_options(tmp_path, capsys, monkeypatch,
                                                                                 command):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, command)
    capsys.readouterr()
    assert main(["check", path]) == 0
    assert "TD805" not in capsys.readouterr().out


@pytest.mark.parametrize("command", [
    "cat <<EOF > out\na\nEOF \nprintf '%s' {{x}} > out",
    "cat <<EOF > out\na\n EOF\nprintf '%s' {{x}} > out",
    "cat > out <<EOF\n[{{x}}]\nEOF \\\n  # c",
])
def test_a_here_document_the_grammar_ends_elsewhere_than_the_shell_is_td804(tmp_path, capsys, monkeypatch,
                                                                            command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD804",
            "a here-document whose end line is not exactly its delimiter")


@pytest.mark.parametrize("command, program", [
    ("bash <(printf '%s' {{x}})", "bash"),
    ("sh < <(printf '%s' {{x}})", "sh"),
    ("source <(printf '%s' {{x}})", "source"),
    (". <(printf '%s' {{x}})", "."),
    ("printf '%s' {{x}} > >(sh)", "sh"),
    ("exec > >(sh); printf '%s' {{x}}", "sh"),
    ("diff <(printf '%s' {{x}}) /dev/null | sh", "sh"),
    ("awk -f <(printf '%s' {{x}}) /dev/null", "awk"),
])
def test_a_value_through_process_substitution_into_a_shell_is_td803(tmp_path, capsys, monkeypatch, command,
                                                                   program):
    """bash runs these as /bin/sh too (process substitution works in its POSIX mode since 5.1)."""
    refused(tmp_path, capsys, monkeypatch, command, HOSTILE, "TD803", f"`{program}` parses again as code")


def test_coproc_is_td804(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "coproc { sh; }; printf '%s\\n' {{x}} >&\"${COPROC[1]}\"", HOSTILE,
            "TD804", "coproc is bash-only syntax the checker's grammar does not model")



@pytest.mark.parametrize("command, name", [
    ("BASH_ENV={{x}} bash -c true", "BASH_ENV"),
    ("export ENV={{x}}; sh -i < /dev/null", "ENV"),
    ("PS4={{x}} bash -xc true", "PS4"),
    ("env LD_PRELOAD={{x}} true", "LD_PRELOAD"),
    ("GIT_SSH_COMMAND={{x}} git ls-remote ssh://host/x", "GIT_SSH_COMMAND"),
])
def test_a_value_in_a_variable_read_as_code_is_td803(tmp_path, capsys, monkeypatch, command, name):
    """bash expands $BASH_ENV, $ENV and $PS4 ($(…) included) before using them; git and the loader run or load
    what the others name."""
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803",
            f"is the value of ${name}, which the shell or a program reads as code")


def test_the_docs_name_every_variable_and_wrapper_the_checker_knows():
    from paths import REPO
    from taskdsl.language import shell

    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    assert [name for name in sorted(shell.CODE_VARIABLES) if f"`{name}`" not in text] == []
    assert [start for start in shell.CODE_VARIABLE_PREFIXES if f"`{start}*`" not in text] == []
    assert [end for end in shell.CODE_VARIABLE_SUFFIXES if f"`{end}`" not in text] == []
    assert [name for name in sorted(shell.GIT_DATA_VARIABLES) if f"`{name}`" not in text] == []
    assert all(f"`{variant}`" in text for variant in shell.BUILD_VARIANTS.split())
    wrappers = "env sudo doas command exec builtin nohup setsid time nice ionice chrt taskset stdbuf timeout flock".split()
    assert [name for name in wrappers if shell.PROGRAMS[name].command_at is None] == []
    assert all(f"`{name}`" in text for name in wrappers)


# ---------------------------------------------------------------- the third review

@pytest.mark.parametrize("command, shown", [
    ("/bin/[s]h -c {{x}}", "/bin/[s]h"),
    ("/bin/da?h -c {{x}}", "/bin/da?h"),
    ("timeout 5 /bin/[d]ash -c {{x}}", "/bin/[d]ash"),
])
def test_a_program_named_by_a_pattern_fails_closed(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is an argument of a program named at run time (`{shown}`)")


@pytest.mark.parametrize("command, program", [
    # a version suffix or another name of a program in the table
    ("python3.11 -c {{x}}", "python"),
    ("python3.11 -m timeit {{x}}", "python -m timeit"),
    ("perl5.36.0 -e {{x}}", "perl"),
    ("nodejs -e {{x}}", "node"),
    ("printf '%s' {{x}} | python3.11", "python"),
    # wrappers whose options take a separate value, and wrappers the table did not know
    ('stdbuf --output L sh -c "echo {{x}}"', "sh"),
    ('unshare -w /tmp sh -c "echo {{x}}"', "sh"),
    ('setpriv --reuid 0 sh -c "echo {{x}}"', "sh"),
    ('setarch x86_64 sh -c "echo {{x}}"', "sh"),
    ('ssh-agent sh -c "echo {{x}}"', "sh"),
    ('fakeroot sh -c "echo {{x}}"', "sh"),
    ('valgrind -q sh -c "echo {{x}}"', "sh"),
    ("capsh -- -c {{x}}", "capsh"),
    ("tmux -L a new-session -d {{x}}", "tmux"),
    # a script read from standard input in any spelling
    ("printf '%s' {{x}} | awk -f /dev/stdin", "awk"),
    ("printf '%s\\n' {{x}} | sed -n -f /dev/stdin f", "sed"),
    ("printf '%s\\n' {{x}} | make -f -", "make"),
    ("printf '%s' {{x}} | sh /dev//stdin", "sh"),
    ("printf '%s' {{x}} | bash /dev/std[i]n", "bash"),
    ("printf '%s' {{x}} | perl /dev/std[i]n", "perl"),
    ("printf '%s' {{x}} | sh /proc/thread-self/fd/0", "sh"),
    # editors read their commands from standard input
    ("printf '%s\\n' {{x}} | vim -es -u NONE", "vim"),
    ("printf '%s\\n' {{x}} | ex -s -u NONE", "vim"),
    ("printf '%s\\n' {{x}} | ed -s", "ed"),
    ("npx -c {{x}}", "npx"),
])
def test_third_review_a_program_parses_the_value_again(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "x; touch marker #", "TD803",
            f"`{program}` parses again as code")


@pytest.mark.parametrize("command, name", [
    ("TAR_OPTIONS={{x}} tar cf /dev/null .", "TAR_OPTIONS"),
    ("export TAR_OPTIONS={{x}}; tar cf /dev/null .", "TAR_OPTIONS"),
    ("MAKEFLAGS={{x}} make -f mk", "MAKEFLAGS"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.zz GIT_CONFIG_VALUE_0={{x}} git zz", "GIT_CONFIG_VALUE_0"),
    ("GIT_SEQUENCE_EDITOR={{x}} git rebase -i HEAD~1", "GIT_SEQUENCE_EDITOR"),
    ("env \"BASH_FUNC_echo%%={{x}}\" bash -c 'echo hi'", "BASH_FUNC_echo%%"),
])
def test_third_review_a_variable_family_read_as_code_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803",
            f"is the value of ${name}, which the shell or a program reads as code")


@pytest.mark.parametrize("command, value", [
    ("ex -s -u NONE {{x}} -c q", "+!touch marker"),
])
def test_third_review_option_position_of_an_editor_or_npx_is_an_error(tmp_path, capsys, monkeypatch, command,
                                                                         value):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD805", "put -- before it")


def test_third_review_the_first_word_after_npx_is_the_command_it_runs(tmp_path, capsys, monkeypatch):
    """npx {{x}} is TD803, not TD805: after `--` too (npx -- {{x}}) the value names the package npx runs."""
    for command in ("npx {{x}}", "npx -- {{x}}"):
        refused(tmp_path, capsys, monkeypatch, command, "--call=touch marker", "TD803", "is an argument of `npx`")


@pytest.mark.parametrize("command", [
    "printf '[%s]' {{x}} > out",
    "printf '%s' {{x}} | sed -n -f prog.sed > out",
    "[ {{x}} = a ] || printf '[%s]' {{x}} > out",
])
def test_third_review_harmless_commands_still_run(tmp_path, capsys, monkeypatch, command):
    (tmp_path / "prog.sed").write_text("p\n")
    out = ran(tmp_path, capsys, monkeypatch, command, "x; touch marker #")
    assert "x; touch marker #" in out


HEREDOC_CONTINUATION = "in a command with a here-document whose delimiter is unquoted"


@pytest.mark.parametrize("command, value", [
    ("cat <<EOF | sh\necho hi \\\nEOF\necho {{x}}\nEOF", '"; touch marker; echo "'),
    ("cat <<EOF | sh\n: \\\nEOF\n: {{x}}\nEOF", "$(touch marker)"),
    ("printf '%s' {{x}} > out; cat <<EOF\na \\\nEOF", "touch marker"),
    ("cat > out <<EOF\n$\\\n{{x}}\nEOF", "touch marker"),
])
def test_a_line_continuation_in_a_command_with_an_unquoted_here_document_is_td804(tmp_path, capsys, monkeypatch,
                                                                                  command, value):
    """dash joins \\ and the line end in an unquoted here-document before it looks for the end line: the document
    ends at another line than the grammar says."""
    refused(tmp_path, capsys, monkeypatch, command, value, "TD804", HEREDOC_CONTINUATION)


def test_a_continuation_in_a_quoted_here_document_is_text(tmp_path, capsys, monkeypatch):
    out = ran(tmp_path, capsys, monkeypatch, "cat > out <<'EOF'\na \\\nEOF\nprintf '[%s]' {{x}} >> out",
              "x; touch marker #")
    assert out == "a \\\n[x; touch marker #]"


@pytest.mark.parametrize("command, program", [
    ("cat <<EOF | (sh)\n{{x}}\nEOF", "sh"),
    ("cat <<EOF | { sh; }\n{{x}}\nEOF", "sh"),
    ("cat <<EOF | if true; then sh; fi\n{{x}}\nEOF", "sh"),
    ("{ sh; } <<EOF\n{{x}}\nEOF", "sh"),
    ("( sh ) <<EOF\n{{x}}\nEOF", "sh"),
    ("exec <<EOF\n{{x}}\nEOF\nsh", "sh"),
    ("exec 3<<EOF\n{{x}}\nEOF\nsh <&3", "sh"),
    ("sh /dev/fd/3 3<<EOF\n{{x}}\nEOF", "sh"),
    ('while read -r l; do sh -c "$l"; done <<EOF\n{{x}}\nEOF', "sh"),
])
def test_a_here_document_into_a_compound_an_exec_or_a_descriptor_is_td803(tmp_path, capsys, monkeypatch, command,
                                                                          program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", f"`{program}` parses again as code")


def test_a_descriptor_number_the_grammar_reads_as_a_word_is_td804(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} | sh 0<&0", "touch marker", "TD804",
            "a descriptor number written right before a redirection")


def test_a_here_document_read_as_data_in_a_loop_still_runs(tmp_path, capsys, monkeypatch):
    out = ran(tmp_path, capsys, monkeypatch, 'while read -r l; do printf "[%s]" "$l"; done > out <<EOF\n{{x}}\nEOF',
              "x; touch marker #")
    assert out == "[x; touch marker #]"


@pytest.mark.parametrize("command", [
    "git rebase -x {{x}} HEAD~1",
    "git rebase --exec={{x}} HEAD~1",
    "git grep --open-files-in-pager={{x}} hello",
    "git grep -O{{x}} hello",
])
def test_a_git_subcommand_option_that_runs_a_command_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "`git` parses again as code")


@pytest.mark.parametrize("command, value", [
    ("git grep -i {{x}} hello", "--open-files-in-pager=touch marker"),
    ("git log -p {{x}}", "--output=marker"),
])
def test_a_value_after_a_git_flag_that_takes_no_argument_is_in_option_position(tmp_path, capsys, monkeypatch,
                                                                                 command, value):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD805", "put -- before it")


@pytest.mark.parametrize("command", ["alias s=sh\ns -c {{x}}", "alias p='printf %s'\np {{x}} > out"])
def test_a_command_that_defines_an_alias_fails_closed(tmp_path, capsys, monkeypatch, command):
    """dash expands aliases in scripts: `s` is sh there, and the checker cannot see it."""
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "defines an alias")


def test_listing_aliases_defines_none(tmp_path, capsys, monkeypatch):
    assert ran(tmp_path, capsys, monkeypatch, "alias > /dev/null; printf '[%s]' {{x}} > out",
               "x; touch marker #") == "[x; touch marker #]"


@pytest.mark.parametrize("command", ["ex -s -u NONE +{{x}} -c q f", 'vim -es -u NONE "+{{x}}" -c q f'])
def test_a_value_in_an_editors_plus_command_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "!touch marker", "TD803", "`vim` parses again as code")


@pytest.mark.parametrize("command, message", [
    # a wrapper judged by an allowlist of its options: an option it does not list fails closed
    ('stdbuf --not-in-the-table L sh -c "echo {{x}}"', "comes after `stdbuf --not-in-the-table`, an option the checker does not know"),
    ('unshare --not-in-the-table /tmp sh -c "echo {{x}}"', "`sh` parses again as code"),
    ("printf '%s' {{x}} | sudo --not-in-the-table u sh", "comes after `sudo --not-in-the-table`, an option the checker does not know"),
])
def test_a_wrapper_option_the_table_does_not_know_may_take_a_value(tmp_path, capsys, monkeypatch, command, message):
    """The checker reads the wrapped command both from the word after the option and from the one after that, or,
    for a wrapper whose options it judges by an allowlist, fails closed."""
    refused(tmp_path, capsys, monkeypatch, command, "x; touch marker #", "TD803", message)


@pytest.mark.parametrize("command, program", [
    ("f() { sh; }\nf <<EOF\n{{x}}\nEOF", "sh"),
    ("f() { sh; }\nprintf '%s' {{x}} | f", "sh"),
    ("printf '%s\\n' {{x}} | gdb -batch -x /dev/stdin", "gdb"),
])
def test_a_function_the_command_defines_or_a_gdb_script_on_stdin_runs_the_value(tmp_path, capsys, monkeypatch,
                                                                                 command, program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", f"`{program}` parses again as code")


def test_option_position_of_strace_is_an_error(tmp_path, capsys, monkeypatch):
    """strace -o '!CMD' pipes its trace into a shell command."""
    refused(tmp_path, capsys, monkeypatch, "strace {{x}} true", "-o!touch marker", "TD805", "put -- before it")


def test_a_function_that_only_reads_data_still_runs(tmp_path, capsys, monkeypatch):
    assert ran(tmp_path, capsys, monkeypatch, "f() { cat; }\nf > out <<EOF\n[{{x}}]\nEOF",
               "x; touch marker #") == "[x; touch marker #]\n"


@pytest.mark.parametrize("command, value, code, message", [
    ("tar cf a.tar t.task.xml; tar xIf ./{{x}} a.tar", "touch marker", "TD803", "`tar` parses again as code"),
    ("rg --pre {{x}} a t.task.xml", "touch marker", "TD803", "`rg` parses again as code"),
    ("rg {{x}} touch t.task.xml", "--pre=sh", "TD805", "put -- before it"),
])
def test_old_style_tar_command_letters_and_rg_pre(tmp_path, capsys, monkeypatch, command, value, code, message):
    refused(tmp_path, capsys, monkeypatch, command, value, code, message)


def test_a_script_path_named_at_run_time_may_be_standard_input(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "F=/dev/stdin; printf '%s' {{x}} | sh \"$F\"", "touch marker", "TD803",
            "`sh` parses again as code")


def test_exec_reading_standard_input_from_a_file_before_a_shell_fails_closed(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} > f\nexec < f\nsh", "touch marker", "TD803",
            "`sh` parses again as code")


# ---------------------------------------------------------------- the fourth review

@pytest.mark.parametrize("command, program", [
    # perl -M/-m: the value is pasted into `use …;`
    ("perl -M{{x}} -e 1", "perl"),
    ("perl -m{{x}} -e 1", "perl"),
    # a value glued to a short-option cluster: getopt reads -n{{x}} with x=e… as -n -e …
    ("sed -n{{x}} f.txt", "sed"),
    ("sed -s{{x}} f.txt", "sed"),
    ("sh -x{{x}}", "sh"),
    # git subcommands whose options run a program
    ("git clone -q -u {{x}} file:///nonexistent d", "git"),
    ("git fetch --upload-pack={{x}} origin", "git"),
    ("printf '%s' {{x}} | xargs -I% git clone -u % file:///nonexistent d", "git"),
    # npm exec -c / --call
    ("npm exec -c {{x}}", "npm"),
    ("npm exec --call={{x}}", "npm"),
    # GNU long options abbreviated
    ("tar --to-com={{x}} -xf a.tar", "tar"),
    ("tar --checkpoint-act=exec={{x}} -cf /dev/null .", "tar"),
    ("tar --use-compress-prog={{x}} -cf /dev/null .", "tar"),
    ("sort --compress-prog={{x}} f", "sort"),
    ("rsync --rsync-pa={{x}} a b", "rsync"),
    ("rsync --rs={{x}} a b", "rsync"),
    # an interpreter's name with a version, platform or build suffix
    ("perl5.36-x86_64-linux-gnu -e {{x}}", "perl"),
    ("python3.12-dbg -c {{x}}", "python3"),
    ("bash-static -c {{x}}", "bash"),
    ("/bin/sh.distrib -c {{x}}", "sh"),
])
def test_fourth_review_a_program_parses_the_value_again(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "x; touch marker #", "TD803",
            f"`{program}` parses again as code")


@pytest.mark.parametrize("command, name", [
    ("RSYNC_RSH={{x}} rsync a b", "RSYNC_RSH"),
    ("PERL5DB={{x}} perl -d -e 1", "PERL5DB"),
    ("PYTHONBREAKPOINT={{x}} python3 -c 1", "PYTHONBREAKPOINT"),
])
def test_fourth_review_a_variable_read_as_code_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803",
            f"is the value of ${name}, which the shell or a program reads as code")


@pytest.mark.parametrize("command, message", [
    ("command export BASH_ENV={{x}}; bash -c true", "is the value of $BASH_ENV, which"),
    ("command command export BASH_ENV={{x}}; bash -c true", "is the value of $BASH_ENV, which"),
    ("command export GIT_SSH_COMMAND={{x}}; git fetch", "is the value of $GIT_SSH_COMMAND, which"),
    ("for BASH_ENV in {{x}}; do export BASH_ENV; bash -c true; done", "is the value of $BASH_ENV, which"),
    ("read -r BASH_ENV <<EOF\n{{x}}\nEOF\nexport BASH_ENV; bash -c true", "`read` parses again as code"),
])
def test_fourth_review_a_variable_read_as_code_assigned_another_way_is_td803(tmp_path, capsys, monkeypatch,
                                                                            command, message):
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803", message)


@pytest.mark.parametrize("command", ["command alias s=sh\ns -c {{x}}", "builtin alias s=sh\ns -c {{x}}",
                                     "eval \"alias s=sh\"\ns -c {{x}}"])
def test_fourth_review_a_wrapped_alias_definition_fails_closed(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "defines an alias")


@pytest.mark.parametrize("command", [
    "f() { sh; }\neval f <<EOF\n{{x}}\nEOF",
    "f() { sh; }\n\"f\" <<EOF\n{{x}}\nEOF",
    "f() { sh; }\n\\f <<EOF\n{{x}}\nEOF",
    "f() { sh; }\ncommand eval f <<EOF\n{{x}}\nEOF",
])
def test_fourth_review_a_function_called_quoted_or_wrapped_runs_the_value(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "parses again as code")


@pytest.mark.parametrize("command, program", [
    ("printf %s {{x}} | eval \"$(cat)\"", "eval"),
    ("cd /dev && printf %s {{x}} | bash stdin", "bash"),
])
def test_fourth_review_a_pipe_into_code_read_another_way_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", f"`{program}` parses again as code")


# ---------------------------------------------------------------- the fifth review

BASH_TEST = "[[ … ]] and (( … )) are bash-only syntax that /bin/sh"


@pytest.mark.parametrize("command, value", [
    # dash runs `[[ "$HOME" == "/root"`, then `"$value" == --help ]]`: the value names the program
    ('[[ "$HOME" == "/root" || {{x}} == "--help" ]] && echo yes', "./evil"),
    ("[[ a == b || {{x}} == c ]]", "./evil"),
    # dash reads > and < as redirections: the value names a file that is emptied or read
    ('[[ "a" > {{x}} ]] && echo greater', "victim.txt"),
    ('[[ "a" < {{x}} ]] && echo less', "victim.txt"),
    # outside the test too: dash reads << as a here-document that swallows the next lines
    ("[[ a << E ]]; printf '%s' {{x}} > out", "x"),
    ("(( 1 << 2 )); printf '%s' {{x}} > out", "x"),
    ("for ((i = 0; i < 1; i++)); do printf '%s' {{x}} > out; done", "x"),
])
def test_bash_only_tests_and_arithmetic_in_a_command_with_a_value_are_td804(tmp_path, capsys, monkeypatch, command,
                                                                           value):
    """The runner runs /bin/sh (dash here), which has no [[ or ((: it reads them as a command and a command line
    of its own, where ||, && and ; start a new command and <, > and << redirect."""
    (tmp_path / "evil").write_text("#!/bin/sh\ntouch marker\n")
    (tmp_path / "evil").chmod(0o755)
    (tmp_path / "victim.txt").write_text("precious")
    refused(tmp_path, capsys, monkeypatch, command, value, "TD804", BASH_TEST)
    assert (tmp_path / "victim.txt").read_text() == "precious"


def test_the_posix_test_runs_the_value_as_one_word(tmp_path, capsys, monkeypatch):
    (tmp_path / "evil").write_text("#!/bin/sh\ntouch marker\n")
    (tmp_path / "evil").chmod(0o755)
    out = ran(tmp_path, capsys, monkeypatch, "[ \"$HOME\" = /nonexistent ] || [ {{x}} = --help ] || "
              "printf '[%s]' {{x}} > out", "./evil")
    assert out == "[./evil]"
    assert ran(tmp_path, capsys, monkeypatch, "test a = {{x}} || printf '[%s]' {{x}} > out", "> victim.txt") == \
        "[> victim.txt]"


@pytest.mark.parametrize("command", [
    "env {sh,-c,{{x}}}",
    "nohup {sh,-c,{{x}}}",
    "command {eval,{{x}}}",
    "echo hi | xargs {sh,-c,{{x}}}",
    "find . -maxdepth 0 -exec {sh,-c,{{x}},\\;}",
    "sh {-c,}{{x}}",
    "python3 {-c,{{x}}}",
    "printf '%s' {1..2}{{x}} > out",
    "export A={1,{{x}}}",
    "printf '%s' \"$(printf %s {a,{{x}}})\" > out",
])
def test_a_value_in_a_word_with_a_brace_expansion_is_td801(tmp_path, capsys, monkeypatch, command):
    """bash (also as /bin/sh, in its POSIX mode) splits {sh,-c,"$v"} into sh -c "$v": the value becomes a word of
    its own, or the script of sh -c."""
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD801", "in a word with a brace expansion")


def test_braces_that_are_quoted_escaped_or_in_an_assignment_are_text(tmp_path, capsys, monkeypatch):
    out = ran(tmp_path, capsys, monkeypatch, "a={1,{{x}}}; printf '[%s]' \"{a,b}\" a\\{b,{{x}}\\} \"$a\" > out",
              "x; touch marker #")
    assert out == "[{a,b}][a{b,x; touch marker #}][{1,x; touch marker #}]"


@pytest.mark.parametrize("command, message", [
    ("sleep 0 & wait -p {{x}} $!", "where the shell reads a variable name"),
    ("sleep 0 & wait {{x}} $!", "where bash's printf or wait reads a leading '-' as an option"),
    ("printf {{x}} %s 1 > out", "where bash's printf or wait reads a leading '-' as an option"),
    ("getopts ab {{x}}", "where the shell reads a variable name"),
    # bash's test: a value right after another value may follow -v ([ "$x" "$y" ] with x=-v)
    ("test {{x}} {{x}} && printf x > out", "where the shell reads a variable name"),
    ("test ! \"$1\" {{x}}", "where the shell reads a variable name"),
])
def test_a_value_where_bash_reads_a_variable_name_is_td801(tmp_path, capsys, monkeypatch, command, message):
    """bash evaluates a subscript in a variable name as arithmetic: wait -p 'a[$(cmd)]' runs cmd."""
    refused(tmp_path, capsys, monkeypatch, command, "a[$(touch marker)]", "TD801", message)


def test_printf_and_wait_after_double_dash_take_the_value_as_data(tmp_path, capsys, monkeypatch):
    assert ran(tmp_path, capsys, monkeypatch, "printf -- {{x}} > out; wait -- $! 2>/dev/null || true",
               "-va[$(touch marker)]") == "-va[$(touch marker)]"


MAKEFILE = "all:\n\t@echo built\n%:\n\t@echo building $@\n"


@pytest.mark.parametrize("command, value", [
    ("make CFLAGS={{x}}", "$(shell touch marker)"),
    ("make X:={{x}}", "$(shell touch marker)"),
    ("make -- {{x}}", "A:=$(shell touch marker)"),
    ("make all -- {{x}}", "A!=touch marker"),
    ("make -- X:={{x}}", "$(shell touch marker)"),
    # a target's name is pasted into the recipe that builds it ($@), which the shell runs
    ("make -s {{x}}", "a;touch marker;b"),
    ("make -j {{x}}", "a;touch marker;b"),
    ("gmake {{x}}", "a;touch marker;b"),
    ("make -E {{x}}", "$(shell touch marker)"),
])
def test_every_operand_of_make_is_code(tmp_path, capsys, monkeypatch, command, value):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", "make expands $(…) in a variable assignment")


def test_make_with_the_value_in_the_environment_runs_it_as_data(tmp_path, capsys, monkeypatch):
    (tmp_path / "Makefile").write_text("all:\n\t@printf '[%s]' \"$$TASKDSL_INPUT_X\" > out\n")
    assert ran(tmp_path, capsys, monkeypatch, "make -s -C {{x}} all", ".") == "[.]"


@pytest.mark.parametrize("command, value, program", [
    ("node --import={{x}} -e 0", "data:text/javascript,require('fs').writeFileSync('marker','')", "node"),
    ("node --experimental-loader={{x}} -e 0", "data:text/javascript,export {}", "node"),
    ("node --import {{x}} -e 0", "data:text/javascript,export {}", "node"),
    ("node -r {{x}} -e 0", "./evil.js", "node"),
    ("node --require={{x}} -e 0", "./evil.js", "node"),
    ("python3 -m {{x}}", "evil", "python3 -m"),
    ("python3 -W {{x}} -c 1", "ignore::antigravity.Warning", "python3"),
    ("perl -M{{x}} -e 1", "evil", "perl"),
    ("ruby -r{{x}} -e 1", "./evil", "ruby"),
    ("lua -l {{x}}", "evil", "lua"),
    ("gawk -i {{x}} 'BEGIN { }'", "evil", "gawk"),
    ("php -d {{x}} -r 1", "auto_prepend_file=evil", "php"),
    ("bun --preload {{x}} a.ts", "./evil.ts", "bun"),
    ("printf '%s' {{x}} | perl -Mstrict", "system('touch marker')", "perl"),
    ("psql -o {{x}} -c 'select 1'", "|touch marker", "psql"),
    ("psql --output={{x}} -c 'select 1'", "|touch marker", "psql"),
])
def test_an_option_that_loads_a_module_named_by_the_value_is_td803(tmp_path, capsys, monkeypatch, command, value,
                                                                   program):
    """node --import takes a data: URL, which is code itself; the other options load any module the value names."""
    (tmp_path / "evil.js").write_text("require('fs').writeFileSync('marker', '')\n")
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", f"`{program}` parses again as code")


def test_a_node_script_takes_its_arguments_as_data(tmp_path, capsys, monkeypatch):
    (tmp_path / "s.js").write_text("require('fs').writeFileSync('out', '[' + process.argv[2] + ']')\n")
    assert ran(tmp_path, capsys, monkeypatch, "node s.js {{x}}", "--import=data:x") == "[--import=data:x]"


@pytest.mark.parametrize("command", [
    "wget -q -e {{x}} http://127.0.0.1:9/",
    "wget -q -e{{x}} http://127.0.0.1:9/",
    "wget -q --execute={{x}} http://127.0.0.1:9/",
    "wget -q --execute {{x}} http://127.0.0.1:9/",
])
def test_wget_execute_in_either_spelling_is_td803(tmp_path, capsys, monkeypatch, command):
    (tmp_path / "evil").write_text("#!/bin/sh\ntouch marker\n")
    (tmp_path / "evil").chmod(0o755)
    refused(tmp_path, capsys, monkeypatch, command, "use_askpass=./evil", "TD803", "`wget` parses again as code")


def test_a_short_option_and_its_long_form_say_the_same_everywhere_in_the_table():
    """Aliases are named once per program (aliases="e=--execute …"); both spellings get what either is listed as."""
    from taskdsl.language import shell

    def verdict(name, words):
        literals = [name] + [None if w == "V" else w for w in words]
        prefixes = [name] + ["" if w == "V" else w for w in words]
        verdicts, _, _ = shell._scan(literals, prefixes, [p or "${TASKDSL_SUB_1}" for p in prefixes])
        return [v[0] if v else None for v in verdicts]

    checked = 0
    for name, spec in shell.PROGRAMS.items():
        for short, long in spec.aliases:
            kind = [spelling for spelling in ("code", "load", "args") if short in getattr(spec, spelling)][0]
            assert long in getattr(spec, {"code": "long_code", "load": "long_load", "args": "long_args"}[kind]), \
                (name, short, long)
            if kind in ("code", "load"):  # the value is code in all three spellings
                assert verdict(name, [f"-{short}", "V"])[2] == "reparse", (name, short)
                assert verdict(name, [f"{long}", "V"])[2] == "reparse", (name, long)
            checked += 1
    assert checked > 80
    assert shell.PROGRAMS["wget"].code == "e" and "--execute" in shell.PROGRAMS["wget"].long_code


@pytest.mark.parametrize("command", ["printf '%s' {{x}} | curl -s -K - file:///dev/null",
                                     "printf '%s' {{x}} | curl -s --config=/dev/stdin file:///dev/null"])
def test_a_value_piped_into_curls_config_is_td803(tmp_path, capsys, monkeypatch, command):
    """curl reads options from -K FILE; from standard input, the value's lines are options (output = FILE writes
    where the value says, upload-file = FILE sends a file)."""
    refused(tmp_path, capsys, monkeypatch, command, 'output = "marker"', "TD803", "`curl` parses again as code")


def test_curl_with_the_value_as_an_options_argument_runs(tmp_path, capsys, monkeypatch):
    (tmp_path / "page").write_text("hello")
    assert ran(tmp_path, capsys, monkeypatch, "curl -s -o out -- {{x}}", f"file://{tmp_path}/page") == "hello"


@pytest.mark.parametrize("command, name", [
    # a program to run, named by a program's own setting
    ("SHELL={{x}} make -f mk", "SHELL"),
    ("CONFIG_SHELL={{x}} sh ./configure", "CONFIG_SHELL"),
    ("CC={{x}} make -f mk", "CC"),
    ("env SVN_SSH={{x}} svn ls svn+ssh://host/repo", "SVN_SSH"),
    ("RSH={{x}} rsync a b", "RSH"),
    ("HGMERGE={{x}} hg merge", "HGMERGE"),
    ("GIT_MERGE_AUTOEDIT=no MERGE_TOOL_PROGRAM={{x}} true", "MERGE_TOOL_PROGRAM"),
    ("PRE_COMMIT_HOOK={{x}} true", "PRE_COMMIT_HOOK"),
    ("DIFF_EXEC={{x}} true", "DIFF_EXEC"),
    ("MAN_PROG={{x}} true", "MAN_PROG"),
    # options, code run at start, places code and configuration are loaded from
    ("command export JAVA_OPTS={{x}}; java -version", "JAVA_OPTS"),
    ("PERL_MB_OPT={{x}} perl Build.PL", "PERL_MB_OPT"),
    ("ANSIBLE_SSH_ARGS={{x}} ansible all -m ping", "ANSIBLE_SSH_ARGS"),
    ("declare -x LUA_INIT={{x}}; lua -e 1", "LUA_INIT"),
    ("VIMINIT={{x}} vim -es", "VIMINIT"),
    ("PATH={{x}} sh -c true", "PATH"),
    ("NODE_PATH={{x}} node -e 1", "NODE_PATH"),
    ("GEM_HOME={{x}} gem list", "GEM_HOME"),
    ("typeset -x XDG_CONFIG_HOME={{x}}; git log", "XDG_CONFIG_HOME"),
    ("KUBECONFIG={{x}} kubectl get pods", "KUBECONFIG"),
    ("export GIT_TEMPLATE_DIR={{x}}; git init d", "GIT_TEMPLATE_DIR"),
    ("GIT_DIR={{x}} git status", "GIT_DIR"),
    ("npm_config_script_shell={{x}} npm run build", "npm_config_script_shell"),
    ("DYLD_INSERT_LIBRARIES={{x}} true", "DYLD_INSERT_LIBRARIES"),
    ("PYTHONWARNINGS={{x}} python3 -c 1", "PYTHONWARNINGS"),
    ("PERL_MM_OPT={{x}} perl Makefile.PL", "PERL_MM_OPT"),
    ("RUBYGEMS_GEMDEPS={{x}} ruby -e 1", "RUBYGEMS_GEMDEPS"),
    ("PSQLRC={{x}} psql -l", "PSQLRC"),
    ("FCEDIT={{x}} true", "FCEDIT"),
    ("for HGMERGE in {{x}}; do export HGMERGE; hg merge; done", "HGMERGE"),
    ("printf -v GIT_SSH %s {{x}}; export GIT_SSH; git fetch", "GIT_SSH"),
    ("sudo -n GIT_SSH={{x}} git fetch", "GIT_SSH"),
    ("f() { local PAGER={{x}}; git log; }; f", "PAGER"),
    ("r={{x}}; PAGER=$r git log", "PAGER"),
])
def test_fifth_review_a_variable_of_a_family_read_as_code_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803",
            f"is the value of ${name}, which the shell or a program reads as code")


@pytest.mark.parametrize("command, program", [
    ("read -r DIFF_PROGRAM <<EOF\n{{x}}\nEOF\nexport DIFF_PROGRAM", "read"),
    ("mapfile -t GIT_PAGER <<EOF\n{{x}}\nEOF\nexport GIT_PAGER", "mapfile"),
])
def test_fifth_review_a_variable_of_a_family_read_from_a_here_document_is_td803(tmp_path, capsys, monkeypatch,
                                                                               command, program):
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD803", f"`{program}` parses again as code")


@pytest.mark.parametrize("command", [
    "GIT_AUTHOR_NAME={{x}}; printf '%s' \"$GIT_AUTHOR_NAME\" > out",
    "NODE_ENV={{x}}; printf '%s' \"$NODE_ENV\" > out",
    "HTTPS_PROXY={{x}}; printf '%s' \"$HTTPS_PROXY\" > out",
    "out_path={{x}}; printf '%s' \"$out_path\" > out",
])
def test_fifth_review_variables_of_no_family_still_carry_data(tmp_path, capsys, monkeypatch, command):
    assert ran(tmp_path, capsys, monkeypatch, command, "$(touch marker)") == "$(touch marker)"


@pytest.mark.parametrize("command, program", [
    # the positional parameters: set, a function's arguments, sh -c SCRIPT _ ARG
    ('set -- sh -c {{x}}; "$@"', '"$@"'),
    ("set -- sh -c {{x}}; $*", "$*"),
    ('set -- {{x}}; eval "$1"', "eval"),
    ('f() { sh -c "$1"; }; f {{x}}', "sh"),
    ("sh -c 'eval \"$1\"' _ {{x}}", "sh"),
    ("sh -c '\"$@\"' _ sh -c {{x}}", "sh"),
    # a variable assigned a value, and expanded where code is read
    ('r={{x}}; eval "$r"', "eval"),
    ('r={{x}}; s="echo $r"; sh -c "$s"', "sh"),
    ("r={{x}}; $r", "$r"),
    ("r={{x}}; nice $r", "nice"),
    ('set -- sh -c {{x}}; exec "$@"', "exec"),
    ('set -- sh -c {{x}}; env "$@"', "env"),
    ('retry() { "$@"; }; retry sh -c {{x}}', '"$@"'),
    ("r={{x}}; printf '%s' \"$r\" | sh", "sh"),
    ("r={{x}}; cat <<EOF | sh\n$r\nEOF", "sh"),
    ("for r in {{x}}; do eval \"$r\"; done", "eval"),
    ("read -r l <<EOF\n{{x}}\nEOF\neval \"$l\"", "eval"),
    ("printf -v r %s {{x}}; eval \"$r\"", "eval"),
    ("r={{x}}; eval \"${r:-true}\"", "eval"),
    ("f() { local r={{x}}; eval \"$r\"; }; f", "eval"),
    ("mapfile -t r <<EOF\n{{x}}\nEOF\neval \"$r\"", "eval"),
    ("r={{x}}; printf '%s' ${!r}", "${!r}"),
    ("r={{x}}; printf '%s' ${r@P}", "${r@P}"),
    # a value written to a file that a program of the command then runs
    ("printf '%s' {{x}} > f; sh < f", "sh"),
    ("printf '%s' {{x}} > f; sh f", "sh"),
    ("printf '%s' {{x}} > f\n. ./f", "."),
    ("printf '%s' {{x}} > f.sh && bash f.sh", "bash"),
    ("cat > f <<EOF\n{{x}}\nEOF\nsh f", "sh"),
    ("printf '%s' {{x}} > a; cp a b; sh b", "sh"),
    ("printf '%s' {{x}} > a; mv a b; sh b", "sh"),
    ("printf '%s' {{x}} > a; ln -s a b; sh b", "sh"),
    ("printf '%s' {{x}} > a; install a b; sh b", "sh"),
    ("printf '%s' {{x}} | dd of=b 2>/dev/null; sh b", "sh"),
    ("printf 'import os\\nos.system(\"%s\")' {{x}} > f.py; python3 f.py", "python3"),
    ("printf 'BEGIN { system(\"%s\") }' {{x}} > f.awk; awk -f f.awk /dev/null", "awk"),
    ("printf '%s' {{x}} > a; cat a > b; sh b", "sh"),
    ("printf '%s' {{x}} | tee f > /dev/null; sh f", "sh"),
    ("printf '%s' {{x}} > f; cat f | sh", "sh"),
    ('printf \'%s\' {{x}} > f; eval "$(cat f)"', "eval"),
    ("printf '%s' {{x}} > run.sh; chmod +x run.sh; ./run.sh", "./run.sh"),
    ('r={{x}}; printf \'%s\' "$r" > f; sh f', "sh"),
    ("printf '%s' {{x}} > f; sh -c 'sh f'", "sh"),
    ("printf '%s' {{x}} > f; timeout 5 sh f", "sh"),
    ("printf '%s' {{x}} > f; echo f | xargs sh", "sh"),
    ("printf '%s' {{x}} > f; find . -name f -exec sh {} \\;", "sh"),
    ("printf '%s' {{x}} > f; chmod +x f; PATH=.:$PATH f", "f"),
    ("exec > f; printf '%s' {{x}}; exec > /dev/null; sh f", "sh"),
    # code written in the command that reads a variable holding a value; a variable naming another
    ("r={{x}}; eval 'eval \"$r\"'", "eval"),
    ("r={{x}}; export r; sh -c 'eval \"$r\"'", "sh"),
    ("r={{x}}; trap 'eval \"$r\"' EXIT", "trap"),
    ('n=r; r={{x}}; eval "${!n}"', "eval"),
    ('declare -n ref=r; r={{x}}; eval "$ref"', "eval"),
    ('set -- -a {{x}}; getopts a: o; eval "$OPTARG"', "eval"),
    ("r={{x}}; eval 'r2=$r'; eval \"$r2\"", "eval"),
    ('r={{x}}; eval "r2=\\$r"; eval "$r2"', "eval"),
    ("r={{x}}; eval 'set -- $r'; \"$@\"", '"$@"'),
    # $_ is the last word of the command before; $TASKDSL_SUB_1 written out is the value too
    ('printf %s {{x}} > /dev/null; eval "$_"', "eval"),
    ('printf %s {{x}} > /dev/null; eval "$TASKDSL_SUB_1"', "eval"),
])
def test_fifth_review_a_value_handed_on_and_run_later_is_td803(tmp_path, capsys, monkeypatch, command, program):
    """Each ran `touch marker` from the value before: the command hands the value on through the positional
    parameters, a variable or a file, and runs it there."""
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is handed on (in a variable, the positional parameters or a file the command writes) to `{program}`, "
            f"which parses it again as code")


@pytest.mark.parametrize("command, code, message", [
    ("r={{x}}; echo $(( r + 1 ))", "TD801", "in arithmetic"),
    ('r={{x}}; [[ "$r" -gt 1 ]]', "TD804", "[[ … ]] and (( … )) are bash-only syntax"),  # dash runs it
    ('r={{x}}; tar "$r" -cf a.tar t.task.xml', "TD805", "put -- before it"),
    ('set -- -c {{x}}; bash "$@"', "TD805", "put -- before it"),
    ('r={{x}}; echo "${s:r:1}"', "TD801", "in arithmetic"),
    ("declare -i n; n={{x}}", "TD801", "in arithmetic"),
    ("r={{x}}; declare -i n; n=$r", "TD801", "in arithmetic"),
    ('r={{x}}; [[ -v $r ]]', "TD804", "[[ … ]] and (( … )) are bash-only syntax"),
    ('r={{x}}; test -v "$r"', "TD801", "where the shell reads a variable name"),
    ('r={{x}}; unset "$r"', "TD801", "where the shell reads a variable name"),
])
def test_fifth_review_a_value_handed_on_into_arithmetic_or_an_option_is_refused(tmp_path, capsys, monkeypatch,
                                                                               command, code, message):
    refused(tmp_path, capsys, monkeypatch, command, "a[$(touch marker)]", code, message)


@pytest.mark.parametrize("command", [
    "r={{x}}; printf '%s' \"$r\" > out",
    "set -- {{x}}; printf '%s' \"$1\" > out",
    "f() { printf '%s' \"$1\" > out; }; f {{x}}",
    "sh -c 'printf \"%s\" \"$1\" > out' _ {{x}}",
    "printf '%s' {{x}} > input.txt; python3 process.py input.txt",
    "printf '%s' {{x}} > input.txt; sh copy.sh",
    "r={{x}}; export r; sh -c 'printf \"%s\" \"$r\" > out'",
    "set -- {{x}}; eval 'printf \"%s\" \"$1\" > out'",
    "printf '%s' {{x}} > out; find . -name out > /dev/null",
    "printf '%s' {{x}} > input.txt; sh -c 'sh copy.sh'",
    "set -- {{x}}; exec printf '%s' \"$1\" > out",
])
def test_fifth_review_a_value_handed_on_as_data_still_runs(tmp_path, capsys, monkeypatch, command):
    (tmp_path / "process.py").write_text("import sys\nopen('out', 'w').write(open(sys.argv[1]).read())\n")
    (tmp_path / "copy.sh").write_text("cat input.txt > out\n")
    assert ran(tmp_path, capsys, monkeypatch, command, "x; touch marker #") == "x; touch marker #"


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} | node-gyp",
    "printf '%s' {{x}} | python3-config --help",
])
def test_fifth_review_a_program_named_like_an_interpreter_and_a_dash_is_another_program(tmp_path, capsys,
                                                                                         monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, command)
    assert main(["check", path]) == 0, capsys.readouterr()


@pytest.mark.parametrize("command, program", [
    ("python3.7m -c {{x}}", "python3"),
    ("lua5.4 -e {{x}}", "lua"),
    ("perl-static -e {{x}}", "perl"),
    ("python3-x86_64-linux-gnu -c {{x}}", "python3"),
])
def test_fifth_review_an_interpreters_build_is_still_that_interpreter(tmp_path, capsys, monkeypatch, command,
                                                                       program):
    refused(tmp_path, capsys, monkeypatch, command, "x; touch marker #", "TD803", f"`{program}` parses again as code")


def test_fifth_review_a_relative_script_after_a_cd_to_a_folder_of_the_project_runs(tmp_path, capsys, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "script.py").write_text("import sys\nopen('../out', 'w').write(sys.stdin.read())\n")
    assert ran(tmp_path, capsys, monkeypatch, "cd sub && printf '%s' {{x}} | python3 script.py",
               "x; touch marker #") == "x; touch marker #"


@pytest.mark.parametrize("command", [
    'cd "$HOME" && printf %s {{x}} | bash script.sh',
    "cd && printf %s {{x}} | bash script.sh",
    "cd //dev && printf %s {{x}} | bash ./script",
    "cd /proc/self && printf %s {{x}} | bash script",
    "cd /sys/kernel && printf %s {{x}} | bash script",
    "cd sub && printf %s {{x}} | bash stdin",
    "cd .. && printf %s {{x}} | bash fd/0",
    "cd sub && printf %s {{x}} | bash 0",
    "cd sub && printf %s {{x}} | bash ./std[i]n",
    "cd - && printf %s {{x}} | bash script.sh",
    "cd ~ && printf %s {{x}} | bash script.sh",
    "pushd sub; popd; printf %s {{x}} | bash script.sh",
])
def test_fifth_review_a_relative_script_that_may_be_standard_input_after_a_cd_is_td803(tmp_path, capsys,
                                                                                         monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "`bash` parses again as code")


@pytest.mark.parametrize("command, program", [
    ("cd /dev && printf %s {{x}} | awk -f stdin", "awk"),
    ("cd /dev && printf %s {{x}} | sed -n -f stdin f", "sed"),
    ("cd /dev/fd && printf %s {{x}} | make -f0", "make"),
])
def test_fifth_review_a_relative_script_file_of_awk_sed_or_make_after_a_cd_is_td803(tmp_path, capsys, monkeypatch,
                                                                                     command, program):
    refused(tmp_path, capsys, monkeypatch, command, 'BEGIN { system("touch marker") }', "TD803",
            f"`{program}` parses again as code")


@pytest.mark.parametrize("wrapper", ["command", "builtin", "exec", "command -p"])
def test_fifth_review_command_skips_a_function_as_bash_does(tmp_path, capsys, monkeypatch, wrapper):
    """`command f` runs the program f, never the function f (bash: "command: f: not found"); so do builtin and
    exec."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, f"f() {{ sh; }}\n{wrapper} f <<EOF\n{{{{x}}}}\nEOF")
    assert main(["check", path]) == 0, capsys.readouterr()
    main(["run", path, "--input", "x=touch marker"])
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("command", ["git log --output={{x}} -1", "time -o {{x}} true", "tee {{x}} < /dev/null"])
def test_fifth_review_a_path_a_value_names_for_a_write_is_data(tmp_path, capsys, monkeypatch, command):
    """Not guaranteed (docs/security.md): the value is one word, a path the program writes; the checker does not
    refuse it."""
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, command)
    assert main(["check", path]) == 0, capsys.readouterr()


def test_fifth_review_the_documented_path_check_keeps_a_write_inside(tmp_path, capsys, monkeypatch):
    command = "case {{x}} in /*|*..*|-*) exit 1;; esac; printf '%s' ok > {{x}}"
    assert ran(tmp_path, capsys, monkeypatch, command, "out") == "ok"
    assert main(["run", str(tmp_path / "t.task.xml"), "--input", "x=../escaped"]) != 0
    assert not (tmp_path.parent / "escaped").exists()


def test_fifth_review_a_variable_holding_many_values_is_held_to_hold_all(tmp_path, capsys, monkeypatch):
    """The values a variable may hold are kept apart up to 16 (shell.ORIGINS_KEPT), then held to be every value of
    the command (fail closed, and linear for long chains of assignments)."""
    from taskdsl.language import shell

    monkeypatch.chdir(tmp_path)
    few = 'r="' + "{{x}}" * shell.ORIGINS_KEPT + '"; eval "$r"; printf "%s" {{x}} | wc -c'
    many = 'r="' + "{{x}}" * (shell.ORIGINS_KEPT + 1) + '"; eval "$r"; printf "%s" {{x}} | wc -c'
    for command, refused_count in ((few, shell.ORIGINS_KEPT), (many, shell.ORIGINS_KEPT + 2)):
        path = template(tmp_path, command)
        capsys.readouterr()
        assert main(["check", path]) == 1
        out = capsys.readouterr()
        assert (out.out + out.err).count("error TD803") == refused_count


@pytest.mark.parametrize("command", ['printf \'%s\' "{{x}} {{x}}" > out', "printf '%s' \"{{x}}\t {{x}}\" > out"])
def test_two_values_in_one_string_separated_by_blanks_run(tmp_path, capsys, monkeypatch, command):
    """tree-sitter-bash gives the second expansion of "${A} ${B}" a range that starts at the blank: it was read as
    inside ${…} (TD801)."""
    separator = command.split("{{x}}")[1]
    assert ran(tmp_path, capsys, monkeypatch, command, "a$(touch marker)") == separator.join(["a$(touch marker)"] * 2)


@pytest.mark.parametrize("command, program", [
    # shells the table missed: restricted bash still runs any program on PATH; busybox's hush, toybox's sh
    ("rbash -c {{x}}", "rbash"),
    ("printf '%s' {{x}} | rbash", "rbash"),
    ("rzsh -c {{x}}", "rzsh"),
    ("posh -c {{x}}", "posh"),
    ("rksh -c {{x}}", "rksh"),
    ("lksh -c {{x}}", "lksh"),
    ("oksh -c {{x}}", "oksh"),
    ("pdksh -c {{x}}", "pdksh"),
    ("busybox hush -c {{x}}", "hush"),
    ("toybox sh -c {{x}}", "sh"),
    # free-threaded python builds
    ("python3.13t -c {{x}}", "python3"),
    ("python3.13td -c {{x}}", "python3"),
    ("/usr/bin/python3.12t -c {{x}}", "python3"),
    # gdb reads -NAME as --NAME; fish's and awk's long options
    ("gdb -batch -nx -eval-command={{x}}", "gdb"),
    ("gdb -batch -nx --init-eval-command={{x}}", "gdb"),
    ("gdb -batch -nx -init-eval={{x}}", "gdb"),
    ("gdb -batch -nx -iex {{x}}", "gdb"),
    ("gdb -batch -nx --eval-command {{x}}", "gdb"),
    ("fish --command={{x}}", "fish"),
    ("fish --init-command={{x}}", "fish"),
    ("fish -C {{x}}", "fish"),
])
def test_sixth_review_programs_and_options_the_table_missed_are_td803(tmp_path, capsys, monkeypatch, command,
                                                                       program):
    value = "print(1); import os; os.system('touch marker')" if "python" in command else HOSTILE
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", f"`{program}` parses again as code")


@pytest.mark.parametrize("command, program", [
    ("printf '%s' {{x}} > f; awk -E f /dev/null", "awk"),
    ("printf '%s' {{x}} > f; awk --exec=f /dev/null", "awk"),
    ("printf '%s' {{x}} > f; gawk -Ef /dev/null", "gawk"),
    ("printf '%s' {{x}} > f; gdb -batch -nx -ix f", "gdb"),
    ("printf '%s' {{x}} > f; gdb -batch -nx -command=f", "gdb"),
    ("printf '%s' {{x}} > f; gdb -batch -nx --init-command=f", "gdb"),
])
def test_sixth_review_a_written_file_named_by_any_spelling_of_a_script_option_is_td803(tmp_path, capsys,
                                                                                        monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "BEGIN { system(\"touch marker\") }", "TD803",
            f"a file the command writes) to `{program}`, which parses it again as code")


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} > out; gdb -batch -nx -x /dev/null -p 1 -ex 'echo' 2>/dev/null || true",
    "printf '%s' {{x}} > out; rbash -c 'echo hi' > /dev/null",
])
def test_sixth_review_those_programs_still_run_with_the_value_as_data(tmp_path, capsys, monkeypatch, command):
    assert ran(tmp_path, capsys, monkeypatch, command, HOSTILE) == HOSTILE


@pytest.mark.parametrize("command, program", [
    # an assignment given to env or sudo is a variable of the command it runs, as a prefix assignment is
    ("env r={{x}} sh -c 'eval \"$r\"'", "sh"),
    ("env -i r={{x}} sh -c 'eval \"$r\"'", "sh"),
    ("env - r={{x}} sh -c 'eval \"$r\"'", "sh"),
    ("env -u A r={{x}} bash -c 'eval \"$r\"'", "bash"),
    ("env r={{x}} sh -c 'sh -c \"$r\"'", "sh"),
    ("nice env r=\"a {{x}}\" sh -c 'eval \"$r\"'", "sh"),
])
def test_sixth_review_a_variable_env_gives_its_command_is_handed_on(tmp_path, capsys, monkeypatch, command,
                                                                     program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is handed on (in a variable, the positional parameters or a file the command writes) to `{program}`, "
            f"which parses it again as code")


@pytest.mark.parametrize("command", ["env - sh -c {{x}}", "printf '%s' {{x}} | env - sh"])
def test_sixth_review_env_dash_is_an_option_not_the_command(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "`sh` parses again as code")


@pytest.mark.parametrize("command", [
    "env r={{x}} sh -c 'printf \"%s\" \"$r\" > out'",
    "env - r={{x}} /bin/sh -c 'printf \"%s\" \"$r\" > out'",
])
def test_sixth_review_a_variable_env_gives_its_command_as_data_still_runs(tmp_path, capsys, monkeypatch, command):
    assert ran(tmp_path, capsys, monkeypatch, command, HOSTILE) == HOSTILE


@pytest.mark.parametrize("command, program", [
    # a folder-changing option counts as a cd; a link the command makes to a device file is standard input
    ("printf '%s' {{x}} | env -C /dev sh stdin", "sh"),
    ("printf '%s' {{x}} | env --chdir=/dev sh stdin", "sh"),
    ("printf '%s' {{x}} | env --chdir /dev sh stdin", "sh"),
    ("printf '%s' {{x}} | sudo -D /dev sh stdin", "sh"),
    ("printf '%s' {{x}} | (cd /dev; nice sh stdin)", "sh"),
    ("printf '%s' {{x}} | make -C /dev -f stdin", "make"),
    ("ln -s /dev/stdin s; printf '%s' {{x}} | sh s", "sh"),
    ("ln -sf /proc/self/fd/0 s; printf '%s' {{x}} | python3 \"$PWD/s\"", "python3"),
    ("cp -s /dev/stdin s; printf '%s' {{x}} | sh s", "sh"),
])
def test_sixth_review_standard_input_named_after_a_folder_option_or_a_link_is_td803(tmp_path, capsys, monkeypatch,
                                                                                     command, program):
    value = "import os; os.system('touch marker')" if "python" in command else "touch marker"
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", f"`{program}` parses again as code")


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} | env -C sub sh run.sh",
    "printf '%s' {{x}} | env --chdir=sub sh ./run.sh",
    "ln -s sub/run.sh s; printf '%s' {{x}} | sh s",
])
def test_sixth_review_a_script_after_a_folder_option_or_a_link_inside_the_project_runs(tmp_path, capsys,
                                                                                      monkeypatch, command):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run.sh").write_text(f"cat > '{tmp_path / 'out'}'\n")
    assert ran(tmp_path, capsys, monkeypatch, command, HOSTILE) == HOSTILE


@pytest.mark.parametrize("command", [
    # ${s:=word} and ${s=word} assign; for NAME without `in` iterates the positional parameters
    "r={{x}}; : ${s:=$r}; eval \"$s\"",
    "r={{x}}; : \"${t=$r}\"; eval \"$t\"",
    "r={{x}}; eval ': ${s:=$r}'; eval \"$s\"",
    "r={{x}}; set -- a \"$r\"; for a; do eval \"$a\"; done",
    "f() { for a; do eval \"$a\"; done; }; f {{x}}",
    "f() { for i; do :; done; eval \"$i\"; }; f {{x}}",
    "set -- {{x}}; eval 'for a; do :; done'; eval \"$a\"",
])
def test_sixth_review_a_default_assignment_or_a_for_over_the_arguments_hands_the_value_on(tmp_path, capsys,
                                                                                        monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            "is handed on (in a variable, the positional parameters or a file the command writes) to `eval`, "
            "which parses it again as code")


@pytest.mark.parametrize("command", [
    "r={{x}}; : ${s:=$r}; printf '%s' \"$s\" > out",
    "f() { for a; do printf '%s' \"$a\"; done; }; f {{x}} > out",
    "r={{x}}; : \"${t=$r}\"; sh -c 'printf \"%s\" \"$1\"' _ \"$t\" > out",
])
def test_sixth_review_a_default_assignment_or_a_for_over_the_arguments_as_data_still_runs(tmp_path, capsys,
                                                                                         monkeypatch, command):
    assert ran(tmp_path, capsys, monkeypatch, command, HOSTILE) == HOSTILE


@pytest.mark.parametrize("command", [
    # eval code is analysed for the names it mentions (linear in a long chain of evals); code that mentions none
    # of the variables holding a value but fails closed for every variable (${!n}, a file it runs) still uses all
    "r={{x}}; " + "; ".join(f"eval 's{k + 1}=$s{k}'" for k in range(200)).replace("$s0", "$r") + '; eval "$s200"',
    "r={{x}}; n=r; eval 'eval \"${!n}\"'",
    "r={{x}}; n=r; eval 'eval \"eval \\\\\"\\${!n}\\\\\"\"'",
])
def test_sixth_review_eval_code_reaches_the_variables_it_names_or_fails_closed(tmp_path, capsys, monkeypatch,
                                                                              command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            "which parses it again as code")


@pytest.mark.parametrize("command", [
    # in eval code the shell removes a line continuation before it reads names: $r\⏎s is $rs (fail closed)
    "rs={{x}}; eval 'eval \"$r\\\ns\"'",
    "rs={{x}}; eval 's=$r\\\ns'; eval \"$s\"",
])
def test_sixth_review_a_line_continuation_in_eval_code_fails_closed(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "which parses it again as code")


def test_sixth_review_a_line_continuation_after_a_blank_in_eval_code_runs(tmp_path, capsys, monkeypatch):
    assert ran(tmp_path, capsys, monkeypatch, "rs={{x}}; eval 'printf %s \\\n\"$rs\"' > out", HOSTILE) == HOSTILE


@pytest.mark.parametrize("command", [
    # vim -S FILE and -u FILE source the file as ex commands
    "printf '%s' {{x}} > m.vim; vim -es -S m.vim -c q",
    "printf '%s' {{x}} > m.vim; vim -es -u m.vim -c q",
    "printf '%s' {{x}} > m.vim; ex -S m.vim",
])
def test_sixth_review_a_written_file_vim_sources_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "call system('touch marker')", "TD803",
            "a file the command writes) to `vim`, which parses it again as code")


def test_sixth_review_vim_sourcing_a_file_the_command_does_not_write_is_clean(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, "printf '%s' {{x}} > out; vim -es -u NONE -S setup.vim notes.txt")
    assert main(["check", path]) == 0, capsys.readouterr()


@pytest.mark.parametrize("command, name", [
    # a variable read as code that names a file the command writes makes the file code
    ("printf '%s' {{x}} > g; BASH_ENV=g bash -c :", "BASH_ENV"),
    ("printf '%s' {{x}} > m.rc; BASH_ENV=./m.rc bash -c :", "BASH_ENV"),
    ("printf '%s' {{x}} > g; env BASH_ENV=g bash -c :", "BASH_ENV"),
    ("printf '%s\\n' {{x}} > m.mk; MAKEFILES=m.mk make -f /dev/null", "MAKEFILES"),
    ("printf '%s' {{x}} > g; BASH_ENV=\"$PWD/g\" bash -c :", "BASH_ENV"),
])
def test_sixth_review_a_written_file_a_code_variable_names_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"a file the command writes) to `what reads the file ${name}`, which parses it again as code")


def test_sixth_review_a_code_variable_naming_a_file_the_command_does_not_write_runs(tmp_path, capsys, monkeypatch):
    (tmp_path / "setup.sh").write_text("true\n")
    assert ran(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} > out; BASH_ENV=setup.sh bash -c :",
               HOSTILE) == HOSTILE


@pytest.mark.parametrize("command, program", [
    # eval code and a trap's action run in this shell, with the standard input the command has there
    ("printf '%s' {{x}} | eval sh", "eval"),
    ("printf '%s' {{x}} | eval 'cat | sh'", "eval"),
    ("printf '%s' {{x}} | (eval 'sh')", "eval"),
    ("printf '%s' {{x}} | (trap 'sh' EXIT; :)", "trap"),
    ("printf '%s' {{x}} | (trap -- 'cat | sh' EXIT; :)", "trap"),
    ("trap 'sh' EXIT; exec <<EOF\n{{x}}\nEOF", "trap"),
])
def test_sixth_review_eval_or_trap_code_that_runs_standard_input_is_td803(tmp_path, capsys, monkeypatch, command,
                                                                         program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", f"`{program}` parses again as code")


@pytest.mark.parametrize("command", [
    "trap 'rm -f tmp' EXIT; printf '%s' {{x}} | cat > out",
    "printf '%s' {{x}} | eval 'cat > out'",
    "printf '%s' {{x}} | (trap '' INT; cat > out)",
])
def test_sixth_review_eval_or_trap_code_that_reads_no_code_from_standard_input_runs(tmp_path, capsys, monkeypatch,
                                                                                   command):
    assert ran(tmp_path, capsys, monkeypatch, command, HOSTILE) == HOSTILE
