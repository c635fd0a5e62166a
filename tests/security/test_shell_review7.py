"""The shell shapes the seventh review (attack 8) left open, each through the real CLI: before the change, `taskdsl
check` reported no error and `taskdsl run --input x=…` ran a command from the value. Each is closed by a rule that
fails closed for its whole class (docs/security.md, "What a command makes unknowable" and "Wrappers"); the forms that
carry data still check clean."""

import pytest

from taskdsl.language import shell

from tests.security.test_shell_review import codes, refused

REBOUND = "is in a command that rebinds what a program name runs (`{}`"
ARITHMETIC = "is in a command whose arithmetic names `{}`, whose value the checker cannot show is a number"
OPAQUE = "is in a command that runs literal code the checker cannot read as shell code"
PAYLOAD = "touch marker"
ARITH_PAYLOAD = "a[$(touch marker)]"



# ---------------------------------------------------------------- program names rebound (items 4, 4b/6b, 5, 6)

@pytest.mark.parametrize("command, shown", [
    ("printf '%s\\n' {{x}} | bash -c 'hash -p /bin/sh cat; cat'", "hash -p"),
    ("hash -p /bin/sh cat; printf '%s\\n' {{x}} | cat", "hash -p"),
    ("printf '%s\\n' {{x}} | bash -c 'BASH_CMDS[cat]=/bin/sh; cat'", "BASH_CMDS"),
    ("printf '%s\\n' {{x}} | bash -c 'BASH_CMDS=([cat]=/bin/sh); cat'", "BASH_CMDS"),
    ("printf '%s\\n' {{x}} | bash -c 'BASH_ALIASES[cat]=sh; shopt -s expand_aliases\ncat'", "BASH_ALIASES"),
    ("ln -sf /bin/sh ./cat; printf '%s\\n' {{x}} | ./cat", "./cat"),
    ("cp /bin/sh ./cat; printf '%s\\n' {{x}} | ./cat", "./cat"),
    ("mkdir -p b; ln -sf /bin/sh b/cat; printf '%s\\n' {{x}} | PATH=b:$PATH cat", "PATH"),
    ("mkdir -p b; ln -sf /bin/sh b/cat; export PATH=b:$PATH; printf '%s\\n' {{x}} | cat", "PATH"),
    ("mkdir -p b; ln -sf /bin/sh b/cat; printf '%s\\n' {{x}} | env PATH=b:/usr/bin cat", "PATH"),
])
def test_a_program_name_rebound_makes_every_value_td803(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, PAYLOAD, "TD803", REBOUND.format(shown))


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | bash -c 'shopt -s expand_aliases; alias cat=sh\ncat'",
    "printf '%s\\n' {{x}} | bash -O expand_aliases -c 'alias cat=sh\ncat'",
])
def test_an_alias_inside_literal_bash_code_makes_every_value_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, PAYLOAD, "TD803", "is in a command that defines an alias")


@pytest.mark.parametrize("command", [
    "enable -f ./x.so cat; printf '%s\\n' {{x}} | cat",
    "install /bin/sh ./cat; printf '%s\\n' {{x}} | ./cat",
    "mkdir d; cp /bin/sh d/; mv d/sh d/cat; printf '%s\\n' {{x}} | d/cat",
    "cat /bin/sh > ./cat; chmod +x ./cat; printf '%s\\n' {{x}} | ./cat",
    "printf '%s\\n' {{x}} | bash -c 'LD_LIBRARY_PATH=. cat'",
    "hash -p /bin/sh cat; cat <<EOF\n{{x}}\nEOF",
    "builtin hash -p /bin/sh cat; printf '%s\\n' {{x}} | cat",
    "ln -sf /bin/sh ./cat; printf '%s\\n' {{x}} | env ./cat",  # the attacker's variants through a wrapper
    "ln -sf /bin/sh ./cat; printf '%s\\n' {{x}} | xargs -0 ./cat -c",
    "ln -sf /bin/sh ./cat; printf '%s\\n' {{x}} | nice env ./cat",
])
def test_rebinding_variants(command):
    assert [code for code, _ in codes(command)] == ["TD803"]
    assert codes(command)[0][1].startswith(shell.REBOUND) or codes(command)[0][1] == "alias"


@pytest.mark.parametrize("command", [
    "hash -r; printf '%s\\n' {{x}} | cat",  # forgetting the table rebinds nothing
    "./build.sh; printf '%s\\n' {{x}} | cat",  # a program by its path that the command does not write
    "cp a.txt b.txt; printf '%s\\n' {{x}} | ./tool",
    "cp notes.txt ./b.txt; nice -n 5 grep -- {{x}} ./b.txt",  # a written file a wrapped program reads
    "cp notes.txt ./b.txt; wc -l ./b.txt {{x}}",
    "printf '%s' {{x}} > out; BASH_ENV=setup.sh bash -c :",  # a code variable naming a file not written: precise
])
def test_commands_that_rebind_nothing_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- arithmetic on names (items 3, 13)

@pytest.mark.parametrize("command, name", [
    ("n={{x}} bash -c 'declare -i m; m=n; echo \"count $m\"'", "n"),
    ("n={{x}}; export n; bash -c 'echo \"${u:-$((n))}\"'", "n"),
    ("bash -c 'n=$1; declare -i m; m=n' _ {{x}}", "n"),
])
def test_arithmetic_on_a_name_that_may_hold_the_value_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, ARITH_PAYLOAD, "TD803", ARITHMETIC.format(name))


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | bash -c 'read -r l; declare -i m; m=l'",
    "n={{x}}; declare -i m; m=n",
    "n={{x}}; declare -i m; m+=n",
    "n={{x}}; typeset -i k=0; k+=n",
    "n={{x}}; declare -ai m; m[0]=n",
    "n={{x}}; arr=(a b); i=n; echo \"${arr[$i]}\"",
    "n={{x}}; echo \"${u:-$((n))}\"",
    "bash -c 'echo $(( TASKDSL_INPUT_X + 1 ))'; echo {{x}}",
    "n={{x}}; for m in n; do declare -i k=m; done",
])
def test_arithmetic_on_names_variants(command):
    assert codes(command) == [("TD803", codes(command)[0][1])]
    assert codes(command)[0][1].startswith(shell.ARITHMETIC_NAME)


@pytest.mark.parametrize("command", [
    "bash -c 'count=5; (( count > 3 )) && printf \"%s\\n\" \"$1\"' _ {{x}}",  # names the command sets to numbers
    "bash -c 'for ((i = 0; i < 3; i++)); do printf \"%s\\n\" \"$1\"; done' _ {{x}}",
    "bash -c 'echo $(( LINES + 1 ))'; echo {{x}}",  # a name from the environment that holds no value
    "n=3; echo $((n + 1)) {{x}}",
])
def test_arithmetic_on_names_that_hold_numbers_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- literal code the analysis cannot read (item 20, 13)

@pytest.mark.parametrize("command", [
    "r={{x}}; export r; gdb -batch -ex 'shell eval \"$r\"'",
    "r={{x}}; export r; vim -es -c '!eval \"$r\"' -c q",
])
def test_literal_code_of_another_language_with_an_exported_value_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, PAYLOAD, "TD803", OPAQUE)


def test_a_script_the_command_writes_and_runs_with_the_value_is_td803(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "printf 'eval \"$1\"' > s.sh; sh s.sh {{x}}", PAYLOAD, "TD803", OPAQUE)


@pytest.mark.parametrize("command", [
    "r={{x}} gdb -batch -ex 'shell eval \"$r\"'",
    "r={{x}}; set -a; perl -e 'system($ENV{r})'",
    "printf 'eval \"$1\"' > s.py; python3 s.py {{x}}",
])
def test_opaque_code_variants(command):
    assert codes(command) == [("TD803", codes(command)[0][1])]
    assert codes(command)[0][1].startswith(shell.OPAQUE_CODE)


@pytest.mark.parametrize("command", [
    "r={{x}}; trap 'rm -f \"$tmp\"' EXIT; printf '%s' \"$r\"",  # trap code that holds no value
    "python3 -c 'import sys; print(sys.argv[1])' {{x}}",  # literal code, no value exported to it
    "awk '{ print $1 }' {{x}}",
    "sh ./setup.sh {{x}}",  # a script the command does not write
])
def test_literal_code_without_an_exported_value_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- wrappers judged by an allowlist (items 11, 14, 15,
# 17, 19; git --config-env)

ASSIGNED = "stands where `{}` reads NAME=VALUE assignments before its command (after -- too) or the command itself"
UNKNOWN = "comes after `{}`, an option the checker does not know for this program"
ENV_PAYLOAD = "BASH_ENV=$(touch marker)"


@pytest.mark.parametrize("command", [
    "env -- {{x}} bash -c 'echo built'",  # what TD805's fix wrote for env {{x}} …
    "env {{x}} bash -c 'echo built'",
    "env -{{x}} true",
])
def test_a_value_where_env_reads_assignments_is_td803_with_or_without_double_dash(tmp_path, capsys, monkeypatch,
                                                                                 command):
    refused(tmp_path, capsys, monkeypatch, command, ENV_PAYLOAD, "TD803", ASSIGNED.format("env"))


def test_env_gets_no_double_dash_fix(tmp_path):
    from taskdsl.rules.checker import check_text
    text = ('<task type="script" name="s">\n  <command>env {{x}} bash -c :</command>\n'
            '  <inputs><input name="x">a</input></inputs>\n</task>\n')
    found = [d for d in check_text(text).diagnostics if d.code in ("TD803", "TD805")]
    assert [d.code for d in found] == ["TD803"]
    assert all(not d.fixes for d in found)


@pytest.mark.parametrize("command, shown", [
    ("env -P /bin {{x}} bash -c :", "env -P"),
    ("env --argv0 x {{x}} bash -c :", "env --argv0"),
    ("env -a x {{x}} bash -c :", "env -a"),
])
def test_a_wrapper_option_outside_the_allowlist_is_td803(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, ENV_PAYLOAD, "TD803", UNKNOWN.format(shown))


def test_a_value_where_sudo_reads_assignments_is_td803(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "sudo {{x}} bash -c :", ENV_PAYLOAD, "TD803", ASSIGNED.format("sudo"))


@pytest.mark.parametrize("command, wrapper", [
    ("printf '%s' {{x}} | xargs env", "env"),
    ("printf '%s' {{x}} | xargs nice", "nice"),
    ("printf '%s' {{x}} | xargs timeout 5", "timeout"),
    ("printf '%s\\n' {{x}} | xargs -I{} env {} bash -c 'echo built'", "env"),
])
def test_xargs_handing_the_value_to_a_wrapper_is_td803(tmp_path, capsys, monkeypatch, command, wrapper):
    value = ENV_PAYLOAD if "-I{}" in command else "A=1 sh -c 'touch marker'"
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", f"`xargs {wrapper}` parses again as code")


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} | xargs nohup",
    "printf '%s' {{x}} | xargs command",
    "printf '%s' {{x}} | xargs stdbuf -oL",
    "printf '%s' {{x}} | xargs sudo",
    "r={{x}}; printf '%s' \"$r\" | xargs env",
    "printf '%s\\n' {{x}} | xargs -I % env % bash -c :",
    "printf '%s\\n' {{x}} | xargs -i env {} bash -c :",
    "printf '%s\\n' {{x}} | xargs -I{} env A=1 {} bash -c :",
    "printf '%s\\n' {{x}} | xargs -I{} sudo {} bash -c :",
    "printf '%s\\n' {{x}} | xargs -I{} nice env {} bash -c :",
])
def test_xargs_to_a_wrapper_variants(command):
    assert [code for code, _ in codes(command)] == ["TD803"]


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | env -S sh", "env -S"),
    ("printf '%s\\n' {{x}} | sudo -s", "sudo -s"),
    ("printf '%s\\n' {{x}} | sudo -i", "sudo -i"),
    ("printf '%s\\n' {{x}} | sftp -b - host", "sftp"),
    ("printf '%s\\n' {{x}} | Rscript -", "Rscript"),
    ("sudo -s grep -- {{x}} f", "sudo -s"),  # sudo -s CMD…: the shell parses the words again
])
def test_programs_that_read_commands_on_their_input_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


def test_env_split_string_that_is_a_shell_reading_its_input_is_td803(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "printf '%s\\n' {{x}} | env -S sh", PAYLOAD, "TD803",
            "`env -S` parses again as code")


def test_runuser_with_a_user_option_is_a_wrapper(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "r={{x}}; export r; runuser -u root -- sh -c 'eval \"$r\"'", PAYLOAD,
            "TD803", "`sh`")


@pytest.mark.parametrize("command", [
    "x={{x}} git --config-env core.sshCommand=x ls-remote ssh://example.invalid/r || true",
    "x={{x}}; export x; git --config-env core.pager=x log",
])
def test_git_config_env_in_its_two_word_form_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, PAYLOAD, "TD803", "`git`")


@pytest.mark.parametrize("command", [
    'env FOO=bar prog "$TASKDSL_INPUT_X"',
    "printf '%s\\n' {{x}} | xargs printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs -0 -r -n1 printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs -I{} grep -- {} f",
    "nice -n 5 grep -- {{x}} f",
    "nice -5 grep -- {{x}} f",
    "env FOO=bar grep -- {{x}} f",
    "env -i LANG=C grep -- {{x}} f",
    "sudo -u bob grep -- {{x}} f",
    "timeout -s KILL 5 grep -- {{x}} f",
    "stdbuf -oL grep -- {{x}} f",
    "runuser -u bob -- grep -- {{x}} f",
    "printf '%s\\n' {{x}} | runuser -u bob -- cat",
    "printf '%s\\n' {{x}} | env -S 'printf %s'",
    "x={{x}}; git --config-env user.name=x commit -m hi",
])
def test_wrappers_with_options_they_list_stay_data(command):
    assert codes(command) == []


def test_the_docs_name_every_wrapper_judged_by_an_allowlist_and_the_rebinding_variables():
    from paths import REPO

    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    judged = sorted(name for name, spec in shell.PROGRAMS.items() if spec.flags is not None)
    start = text.index("**Wrappers\n  are judged by an allowlist of their options**")
    listed = text[start:text.index("the table lists every option it skips", start)]
    assert [name for name in judged if f"`{name}`" not in listed] == []
    assert all(f"`{name}`" in text for name in shell.PROGRAM_VARIABLES)


@pytest.mark.parametrize("command, prefix", [
    # the spellings docs/security.md names for each class
    ("read PATH < p.txt; printf '%s\\n' {{x}} | cat", shell.REBOUND),
    ("printf '%s\\n' {{x}} | env LD_LIBRARY_PATH=. cat", shell.REBOUND),
    ("dd if=/bin/sh of=./cat; printf '%s\\n' {{x}} | ./cat", shell.REBOUND),
    ("tee ./cat < /bin/sh > /dev/null; printf '%s\\n' {{x}} | ./cat", shell.REBOUND),
    ("rsync /bin/sh ./cat; printf '%s\\n' {{x}} | ./cat", shell.REBOUND),
    ("r={{x}}; declare -x r; gdb -batch -ex 'shell eval \"$r\"'", shell.OPAQUE_CODE),
    ("r={{x}}; env n=\"$r\" perl -e 'system($ENV{n})'", shell.OPAQUE_CODE),
    ("i={{x}}; n=i; echo \"${arr[n]}\"", shell.ARITHMETIC_NAME),
    ("printf '%s\\n' {{x}} | bash -c 'printf -v n %s \"$(cat)\"; echo $(( n ))'", shell.ARITHMETIC_NAME),
])
def test_the_documented_spellings_of_each_class(command, prefix):
    assert [code for code, _ in codes(command)] == ["TD803"]
    assert codes(command)[0][1].startswith(prefix)


def test_bash_numbers_in_arithmetic_stay_data():
    assert codes("bash -c 'echo $(( RANDOM % 6 + LINENO ))'; printf '%s\\n' {{x}}") == []
