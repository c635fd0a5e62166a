"""The shell shapes the ninth review found open, each through the real CLI: before the change, `taskdsl check` reported
no error and `taskdsl run --input x=…` ran a command from the value. Each is closed by a rule that fails closed
(docs/security.md):

1. GNU xargs's `--replace`, `--eof` and `--max-lines` take their argument only after `=`: the next word is the
   command xargs runs (`xargs --replace env sh -c '{}'` hands the items to env); `xargs -a FILE` / `--arg-file`
   reads its items from FILE and leaves its standard input (the pipe) to the command it runs (`xargs -a /dev/null
   sh` runs the value);
2. a command that exports a value (export, set -a, or NAME=… before a program) and pipes anything into a program that
   runs its standard input as code: any program may print its environment (`r={{x}} printenv r | sh`); `command
   export r` and `builtin export r` export as `export r` does (literal python code then reads the value);
3. `coproc` in literal shell code (`bash -c 'coproc sh; …'`, eval code) is TD804 as it is at the top level; assigning
   a prompt variable bash runs as code (PS0–PS4, PROMPT_COMMAND) or using `history`/`fc` in a command that holds a
   value makes every value TD803, as a rebound program name does;
4. a standard-input name given where a program loads a file as code (BASH_ENV=/dev/stdin, MAKEFILES=, env ENV=,
   vim -S, ruby -r, node -r, wget --config=) makes the program one that runs its standard input;
5. an env -S string with a backslash or `$` in a command that holds a value: env reads escapes of its own there
   (`\\_` is a space, `\\c` ends the string, `${NAME}` expands), so every value of the command is TD803;
6. a long option an interpreter's table does not know may take the next word as its value: when that word is the
   last, the interpreter may have no script and read its standard input (`… | node --title x`);
7. literal code in a code position of a program whose code is commands (git -c alias.x='!sh', make --eval, gdb -ex,
   vim -c, tar --checkpoint-action=exec=) fed a value on its standard input: a command there may run a shell that
   reads it;
8. with an exported value, literal code of another language in more spellings and places: sed --expression=…,
   vim +CMD, sqlite3's .shell, and code an interpreter reads from a here-document (python3 - <<'E', tclsh <<'E');
9. more interpreters and consoles that run their standard input when given no script (ipython, irb, swipl -, sbcl
   --script, lftp's !cmd, emacs --script /dev/stdin, …);
10. arithmetic on names the rule did not count: read's REPLY, mapfile's MAPFILE, a compound array assignment's
   subscripts (a=([$l]=1)), and a command's output ($(( $(cat) )));
11. a program run by a relative path in a command that makes a file under a name given at run time (ln -s /bin/sh
   "$(printf cat)", xargs -I{} ln -s {} cat) or runs a program that writes files by names of its own (curl -o,
   python3 -c): the path may name a shell.

The variants that carry data still check clean and run."""

import pytest

from taskdsl.language import shell

from tests.security.test_shell_review import codes, ran
from tests.security.test_shell_review import refused as refused_with

REPARSE = "is in text that `{}` parses again as code: the value would become code; pass it as an argument after the " \
          "code and read it there (sys.argv, ARGV, process.argv, awk -v), or from $TASKDSL_INPUT_X"
SH_REPARSE = "is in text that `sh` parses again as code: the value would become code; pass it as a positional " \
             "argument: sh -c '… \"$1\"' _ {{x}}"
PRINTED = "is in a command that exports a value (export, set -a, NAME=… before a program) and pipes a program's " \
          "output (or a here-document) into `{}`, which runs its standard input as code: any program may print its " \
          "environment (printenv NAME | sh); the value would become code"
UNKNOWN = "comes after `{}`, an option the checker does not know for this program, which runs a command given after " \
          "its own options"


def refused(tmp_path, capsys, monkeypatch, command, value, message, code="TD803"):
    """check reports code with message; run refuses (exit 2) with it; the value runs nothing."""
    refused_with(tmp_path, capsys, monkeypatch, command, value, code, message)

SH = "touch marker"


# ---------------------------------------------------------------- 1. xargs's optional arguments and -a FILE

@pytest.mark.parametrize("command, value, message", [
    ("printf '%s\\n' {{x}} | xargs --replace env sh -c '{}'", SH, REPARSE.format("xargs env")),
    ("printf '%s\\n' {{x}} | xargs --replace nice sh -c '{}'", SH, REPARSE.format("xargs nice")),
    ("printf '%s\\n' {{x}} | xargs --eof env", 'sh -c "touch marker"', REPARSE.format("xargs env")),
    ("printf '%s\\n' {{x}} | xargs --max-lines nice", 'sh -c "touch marker"', REPARSE.format("xargs nice")),
    ("printf '%s\\n' {{x}} | xargs --repl timeout 5 sh -c '{}'", SH, UNKNOWN.format("xargs --repl")),
])
def test_xargs_long_options_with_an_optional_argument_leave_the_next_word_to_the_command(
        tmp_path, capsys, monkeypatch, command, value, message):
    refused(tmp_path, capsys, monkeypatch, command, value, message)


@pytest.mark.parametrize("command, value, message", [
    ("printf '%s\\n' {{x}} | xargs -a /dev/null sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs --arg-file=/dev/null sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs -a /dev/null env sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs -a /dev/null python3", "open('marker', 'w')", REPARSE.format("python3")),
])
def test_xargs_a_file_leaves_the_pipe_to_the_command(tmp_path, capsys, monkeypatch, command, value, message):
    refused(tmp_path, capsys, monkeypatch, command, value, message)


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | xargs --replace timeout 5 sh -c '{}'", "xargs timeout"),
    ("printf '%s\\n' {{x}} | xargs --replace=@ sh -c '@'", "sh"),
    ("printf '%s\\n' {{x}} | xargs --eof -0 env", "xargs env"),
    ("printf '%s\\n' {{x}} | xargs -0a /dev/null bash -s", "bash"),
    ("printf '%s\\n' {{x}} | xargs -aempty.txt perl", "perl"),
    ("printf '%s\\n' {{x}} | xargs --arg=/dev/null perl", "perl"),  # an abbreviation of --arg-file
    ("printf '%s\\n' {{x}} | xargs -r --arg-file /dev/null sh -s", "sh"),
])
def test_xargs_variants_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | xargs --replace echo '{}'",
    "printf '%s\\n' {{x}} | xargs --replace grep -- {} f",
    "printf '%s\\n' {{x}} | xargs --eof=E printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs --max-lines=1 printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs -a /dev/null cat",  # cat prints its standard input: data
    "printf '%s\\n' {{x}} | xargs -d a sort",
    "printf '%s\\n' {{x}} | xargs printf '%s\\n'",
])
def test_xargs_data_forms_stay_data(command):
    assert codes(command) == []


def test_xargs_replace_alone_puts_the_item_where_braces_stand(tmp_path, capsys, monkeypatch):
    value = "$(touch marker); touch marker"
    out = ran(tmp_path, capsys, monkeypatch, "printf '%s\\n' {{x}} | xargs --replace printf '[%s]\\n' '{}'", value)
    assert out.strip() == f"[{value}]"
    assert not (tmp_path / "marker").exists()


# ---------------------------------------------------------------- 2. an exported value printed into a shell

@pytest.mark.parametrize("command, program", [
    ("r={{x}}; export r; printenv r | sh", "sh"),
    ("r={{x}} printenv r | sh", "sh"),
    ("r={{x}}; export r; sh -c 'printf \"%s\\n\" \"$r\"' | sh", "sh"),
    ("r={{x}}; export r; envsubst <<'E' | sh\n$r\nE", "sh"),
])
def test_an_exported_value_printed_into_a_shell_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, PRINTED.format(program))


@pytest.mark.parametrize("command, program", [
    ("set -a; r={{x}}; printenv r | bash", "bash"),
    ("r={{x}}; declare -x r; env | python3", "python3"),
    ("r={{x}}; export r; bash -c 'printenv r | sh'", "sh"),  # in literal shell code
    ("r={{x}}; command export r; printenv r | perl", "perl"),
])
def test_exported_value_pipe_variants_are_td803(command, program):
    assert codes(command) == [("TD803", shell.PRINTED_INTO + program)]


@pytest.mark.parametrize("command", [
    "r={{x}}; export r; printenv r | sort",
    "r={{x}} printenv r | tr a b",
    "r={{x}}; printenv r | sh",  # not exported: printenv prints nothing of it
    "printf '%s' {{x}} | wc -c; cat a.sh | sort",
])
def test_exported_values_piped_into_data_readers_stay_data(command):
    assert codes(command) == []


def test_an_exported_value_piped_into_a_filter_runs_as_data(tmp_path, capsys, monkeypatch):
    value = "$(touch marker); touch marker"
    out = ran(tmp_path, capsys, monkeypatch, "r={{x}}; export r; printenv r | tr a a", value)
    assert out.strip() == value
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("wrapper", ["command", "builtin"])
def test_command_export_exports_to_literal_code(tmp_path, capsys, monkeypatch, wrapper):
    command = f"r={{{{x}}}}; {wrapper} export r; python3 -c 'import os; os.system(os.environ[\"r\"])'"
    refused(tmp_path, capsys, monkeypatch, command, SH, "is in a command that runs literal code the checker cannot "
            "read as shell code (`python3 import os; os.system(os.environ[\"r\"])`) while it exports a value")


# ---------------------------------------------------------------- 3. coproc in literal code, prompts, history

COPROC = "coproc is bash-only syntax the checker's grammar does not model (coproc { sh; } reads as words): remove it " \
         "from a command with a {{…}}"
REBOUND = "is in a command that rebinds what a program name runs (`{}`: hash -p, BASH_CMDS, alias, enable -f, PATH " \
          "or a variable that loads code, a file the command writes run as a program, PS4 or PROMPT_COMMAND, history " \
          "or fc): a later command may be a shell that runs the value"


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | bash -c 'coproc sh; cat >&${COPROC[1]}; sleep 1'",
    "printf '%s\\n' {{x}} | bash -c 'eval \"coproc sh; cat >&\\${COPROC[1]}; sleep 1\"'",
])
def test_coproc_in_literal_shell_code_is_td804(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, SH, COPROC, code="TD804")


@pytest.mark.parametrize("command, name", [
    ("printf '%s\\n' {{x}} | bash -c 'set -x; PS4=\"\\$(sh)\"; :'", "PS4"),
    ("r={{x}}; bash -c 'set -o history; history -s \"$r\"; fc -s'", "fc"),
    ("echo {{x}}; PROMPT_COMMAND='sh f' bash -ic :", "PROMPT_COMMAND"),
])
def test_prompt_variables_and_history_are_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, SH, REBOUND.format(name))


@pytest.mark.parametrize("command, name", [
    ("echo {{x}}; env PS4='$(sh)' bash -xc :", "PS4"),
    ("echo {{x}}; export PS1='$(sh)'", "PS1"),
    ("echo {{x}}; bash -c 'PS0=\"\\$(sh)\"'", "PS0"),
    ("echo {{x}}; bash -c 'history -r h'", "history"),
    ("echo {{x}}; fc -s", "fc"),
])
def test_prompt_and_history_variants_are_td803(command, name):
    assert codes(command) == [("TD803", shell.REBOUND + name)]


@pytest.mark.parametrize("command", [
    "echo {{x}}; bash -c 'echo coproc'",
    "echo {{x}}; PS5=1; HISTSIZE=10",
    "printf '%s\\n' {{x}} | grep -c history",
])
def test_words_named_like_them_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 4. standard input loaded as code

READS = "is in text that `{}` parses again as code: the value would become code"


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | BASH_ENV=/dev/stdin bash -c :", "what loads BASH_ENV=/dev/stdin"),
    ("printf '%s\\n' {{x}} | MAKEFILES=/dev/stdin make -f /dev/null", "what loads MAKEFILES=/dev/stdin"),
    ("printf '%s\\n' {{x}} | vim -S /dev/stdin -es -c q", "vim -S"),
])
def test_standard_input_loaded_as_code_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, READS.format(program))


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | BASH_ENV=/dev/fd/0 bash -c :", "what loads BASH_ENV=/dev/fd/0"),
    ("printf '%s\\n' {{x}} | env BASH_ENV=/dev/stdin bash -c :", "what loads BASH_ENV=/dev/stdin"),
    ("printf '%s\\n' {{x}} | ENV=/proc/self/fd/0 sh -c :", "what loads ENV=/proc/self/fd/0"),
    ("printf '%s\\n' {{x}} | ruby -r/dev/stdin -e 1", "ruby -r"),
    ("printf '%s\\n' {{x}} | node -r /dev/stdin -e 1", "node -r"),
    ("printf '%s\\n' {{x}} | wget --config=/dev/stdin https://example.com", "wget --config"),
    ("printf '%s\\n' {{x}} | nice vim -u /dev/stdin -es -c q notes.txt", "vim -u"),
])
def test_standard_input_loaded_as_code_variants_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | grep -F -f /dev/stdin notes.txt",  # patterns: data
    "printf '%s\\n' {{x}} | cat /dev/stdin",
    "printf '%s\\n' {{x}} | tar -T /dev/stdin -cf a.tar",
    "printf '%s\\n' {{x}} | BASH_ENV=setup.sh bash -c 'wc -c'",
])
def test_standard_input_read_as_data_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 5. env -S escapes

ENV_SPLIT = "is in a command that gives env -S a string with a backslash or $ (`{}`): env reads escapes of its own " \
            "there (\\_ is a space, \\c ends the string, ${{NAME}} expands), so the checker cannot tell what runs"


@pytest.mark.parametrize("command, text", [
    ("r={{x}}; export r; env -S 'sh -c \\${r}'", "sh -c \\${r}"),
    ("printf '%s\\n' {{x}} | env -S 'sh\\c'", "sh\\c"),
    ("printf '%s\\n' {{x}} | env -S 'sh\\_-s'", "sh\\_-s"),
])
def test_env_split_strings_with_escapes_are_td803(tmp_path, capsys, monkeypatch, command, text):
    refused(tmp_path, capsys, monkeypatch, command, SH, ENV_SPLIT.format(text))


@pytest.mark.parametrize("command, text", [
    ("printf '%s\\n' {{x}} | env --split-string='sh\\c'", "sh\\c"),
    ("printf '%s\\n' {{x}} | env -vS'sh\\_-s'", "sh\\_-s"),
    ("printf '%s\\n' {{x}} | nice env -S 'b${X}sh'", "b${X}sh"),
    ("echo {{x}}; bash -c \"env -S 'sh\\\\c'\"", "sh\\c"),  # in literal shell code
])
def test_env_split_escape_variants_are_td803(command, text):
    assert codes(command) == [("TD803", shell.ENV_SPLIT + text)]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | env -S 'sort -r'",
    "printf '%s\\n' {{x}} | env -S 'LC_ALL=C sort'",
    "echo {{x}}; env -S 'sort -r' notes.txt",
])
def test_env_split_strings_without_escapes_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 6. an unknown long option's value is not the script

@pytest.mark.parametrize("command, value, program", [
    ("printf '%s\\n' {{x}} | node --title x", "require('fs').writeFileSync('marker', '')", "node"),
    ("printf '%s\\n' {{x}} | python3 --check-hash-based-pycs default", "open('marker', 'w')", "python3"),
])
def test_an_unknown_long_option_before_the_last_word_leaves_stdin_code(tmp_path, capsys, monkeypatch, command, value,
                                                                       program):
    refused(tmp_path, capsys, monkeypatch, command, value, REPARSE.format(program))


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | node --input-type module",
    "printf '%s\\n' {{x}} | perl --foo x",
])
def test_unknown_long_option_variants_are_td803(command):
    assert codes(command)[0][0] == "TD803"


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | node --title x app.js",  # the script after the option's value
    "printf '%s\\n' {{x}} | node --no-warnings app.js",  # an option known to take no value
    "printf '%s\\n' {{x}} | python3 -u app.py",
    "printf '%s\\n' {{x}} | python3 app.py",
])
def test_scripts_after_options_read_stdin_as_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 7. literal command code fed a value on its input

CODE_READER = "is in text that `{}` parses again as code"


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | git -c alias.x='!sh' x", "git"),
    ("printf '%s\\n' {{x}} | make -s -f /dev/null --eval='all: ; sh'", "make"),
    ("printf '%s\\n' {{x}} | vim -es -c '!sh'", "vim"),
    ("printf '%s\\n' {{x}} | tar --checkpoint=1 --checkpoint-action=exec='sh' -cf /dev/null .", "tar"),
])
def test_literal_command_code_fed_a_value_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, CODE_READER.format(program))


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | gdb -batch -ex 'shell sh'",
    "printf '%s\\n' {{x}} | nice git -c alias.x='!sh' x",
])
def test_literal_command_code_variants_are_td803(command):
    assert codes(command)[0][0] == "TD803"


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | awk '{print $1}'",
    "printf '%s\\n' {{x}} | python3 -c 'import sys; print(sys.stdin.read())'",
    "printf '%s\\n' {{x}} | sed -e 's/a/b/'",
    "printf '%s\\n' {{x}} | jq -R .",
    "printf '%s\\n' {{x}} | git hash-object --stdin",
    "printf '%s\\n' {{x}} | sh -c 'wc -c'",  # shell code the checker reads
])
def test_code_reading_its_input_as_data_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 8. an exported value and code of another language

OPAQUE = "is in a command that runs literal code the checker cannot read as shell code (`{}`) while it exports a value"


@pytest.mark.parametrize("command, shown", [
    ("r={{x}}; export r; echo a | sed --expression='1e eval \"$r\"'", 'sed --expression=1e eval "$r"'),
    ("r={{x}}; export r; vim -es +'!eval \"$r\"' +q", 'vim +!eval "$r"'),
    ("r={{x}}; export r; sqlite3 :memory: '.shell eval \"$r\"'", 'sqlite3 .shell eval "$r"'),
])
def test_literal_code_spellings_with_an_exported_value_are_td803(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, SH, OPAQUE.format(shown))


@pytest.mark.parametrize("command, program", [
    ("r={{x}}; export r; python3 - <<'E'\nimport os; os.system(os.environ['r'])\nE", "python3"),
    ("r={{x}}; export r; tclsh <<'E'\nexec sh -c $env(r)\nE", "tclsh"),
    ("r={{x}}; export r; perl <<'E'\nsystem($ENV{r})\nE", "perl"),
])
def test_code_in_a_here_document_with_an_exported_value_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, PRINTED.format(program))


@pytest.mark.parametrize("command", [
    "r={{x}}; export r; cat <<'E'\nhello\nE",
    "r={{x}}; export r; sort <<< 'b a'",
    "echo {{x}} | sed -e's/a/b/'",
    "echo {{x}}; vim +10 f",
])
def test_here_documents_read_as_data_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 9. more programs that run their standard input

@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | ipython --quick", "ipython"),
    ("printf '%s\\n' {{x}} | lftp", "lftp"),
])
def test_more_stdin_interpreters_are_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, REPARSE.format(program))


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | irb", "irb"),
    ("printf '%s\\n' {{x}} | swipl -", "swipl"),
    ("printf '%s\\n' {{x}} | sbcl --script", "sbcl"),
    ("printf '%s\\n' {{x}} | ocaml -stdin", "ocaml"),
    ("printf '%s\\n' {{x}} | wish", "wish"),
    ("printf '%s\\n' {{x}} | mariadb", "mariadb"),
    ("printf '%s\\n' {{x}} | emacs --batch --script /dev/stdin", "emacs --script"),
    ("printf '%s\\n' {{x}} | deno run -", "deno"),
    ("printf '%s\\n' {{x}} | bun run /dev/stdin", "bun"),
])
def test_more_stdin_interpreter_variants_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | ipython app.py",
    "printf '%s\\n' {{x}} | emacs --batch --script a.el",
    "printf '%s\\n' {{x}} | irb app.rb",
    "printf '%s\\n' {{x}} | deno run app.ts",
    "printf '%s\\n' {{x}} | bun run build",
])
def test_their_scripts_read_stdin_as_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 10. arithmetic on more names

ARITHMETIC = "is in a command whose arithmetic names `{}`, whose value the checker cannot show is a number"


@pytest.mark.parametrize("command, name", [
    ("printf '%s\\n' {{x}} | bash -c 'read; echo $(( REPLY ))'", "REPLY"),
    ("printf '%s\\n' {{x}} | bash -c 'mapfile; echo $(( MAPFILE ))'", "MAPFILE"),
    ("printf '%s\\n' {{x}} | bash -c 'read -r l; a=([$l]=1)'", "l"),
    ("printf '%s\\n' {{x}} | bash -c 'echo $(( $(cat) ))'", "$(…)"),
])
def test_arithmetic_on_more_names_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "x[$(touch marker)]", ARITHMETIC.format(name))


@pytest.mark.parametrize("command, name", [
    ("printf '%s\\n' {{x}} | bash -c 'a=([$1]=1)'", "$1"),
    ("printf '%s\\n' {{x}} | bash -c 'readarray; a+=([MAPFILE]=1)'", "MAPFILE"),
])
def test_arithmetic_on_more_names_variants_are_td803(command, name):
    assert codes(command) == [("TD803", shell.ARITHMETIC_NAME + name)]


@pytest.mark.parametrize("command", [
    "echo {{x}}; a=([0]=1 [1]=2); echo $(( 1 + 2 ))",
    "echo {{x}}; read -r l; echo $(( count + 1 ))",
])
def test_arithmetic_on_numbers_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 11. program names rebound by names made at run time

@pytest.mark.parametrize("command", [
    "ln -s /bin/sh \"$(printf cat)\"; printf '%s\\n' {{x}} | ./cat",
    "echo /bin/sh | xargs -I{} ln -s {} cat; printf '%s\\n' {{x}} | ./cat",
    "curl -so cat file:///bin/sh; printf '%s\\n' {{x}} | ./cat",
    "python3 -c 'import shutil; shutil.copy(\"/bin/sh\", \"cat\")'; printf '%s\\n' {{x}} | ./cat",
])
def test_a_program_path_a_run_time_name_may_rebind_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, SH, REBOUND.format("./cat"))


@pytest.mark.parametrize("command", [
    "curl -so page.html https://example.com; printf '%s\\n' {{x}} | /usr/bin/sort",  # an absolute path
    "printf '%s\\n' {{x}} | ./tool",
    "ln -s a b; printf '%s\\n' {{x}} | ./tool",  # a link under a name written in the command
])
def test_program_paths_no_run_time_name_reaches_stay_data(command):
    assert codes(command) == []
