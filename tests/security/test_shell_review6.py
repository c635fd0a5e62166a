"""The shell shapes the last review left open, each through the real CLI: before the change, `taskdsl check` reported
no error and `taskdsl run --input x=…` ran a command from the value. Each is now closed by a rule that fails closed
(docs/security.md, "TD803, TD801 and TD805 for values handed on"); the variants that carry data still check clean."""

import pytest

from taskdsl.language import shell

from tests.security.test_shell_review import codes, refused

HANDED = "is handed on (in a variable, the positional parameters or a file the command writes) to `{}`, which " \
         "parses it again as code: the value would become code; keep it out of code (pass it to a program as an " \
         "argument it reads as data, and run no variable or file that holds it)"




# ---------------------------------------------------------------- 1. eval

@pytest.mark.parametrize("command", [
    'r={{x}}; n=r; eval "t=\\$$n"; eval "$t"',  # a name built from another variable
    'r={{x}}; n=r; eval "eval \\"\\$$n\\""',
    "r={{x}}; s=$(eval 'echo \"$r\"'); eval \"$s\"",  # eval code that prints a value for another eval
])
def test_eval_of_an_expansion_the_analysis_does_not_follow_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", HANDED.format("eval"))


def test_a_function_defined_by_eval_code_in_a_command_with_a_value_is_td803(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "eval 'f() { sh; }'; echo {{x}} | f", "touch marker", "TD803",
            HANDED.format("eval"))


@pytest.mark.parametrize("command", [
    "eval 'echo hi'; echo {{x}}",  # literal code without expansions
    "r={{x}}; eval 'printf \"%s\\n\" \"$r\"'",  # code the analysis reads: the value stays an argument
])
def test_eval_that_the_analysis_follows_or_of_literal_code_stays_precise(command):
    assert codes(command) == []


def test_eval_of_an_expansion_without_a_value_in_the_command_is_not_refused():
    assert codes('eval "$(ssh-agent -s)"; echo hi') == []
    assert codes('eval "$(ssh-agent -s)"; echo {{x}}') == [("TD803", shell.HANDED + "eval")]
    assert codes('r={{x}}; printf "%s" "$r"; eval "$opts"') == [("TD803", shell.HANDED + "eval")]


# ---------------------------------------------------------------- 2. the current folder

@pytest.mark.parametrize("command, program", [
    ('mkdir -p {{x}} && cd {{x}} && sh -c "$PWD"', "sh"),
    ('mkdir -p {{x}} && cd {{x}} && sh -c "$(pwd)"', "sh"),
    ('mkdir -p {{x}} && cd {{x}} && cd / && sh -c "$OLDPWD"', "sh"),
    ('mkdir -p {{x}} && cd -- {{x}} && bash -c "${PWD}"', "bash"),
    ("mkdir -p {{x}} && cd {{x}} && pwd | sh", "sh"),  # what pwd prints flows on as printed
])
def test_the_folder_cd_is_given_a_value_holds_it(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "x;touch marker", "TD803", HANDED.format(program))


@pytest.mark.parametrize("command, program", [
    ('pushd {{x}} && sh -c "$(dirs)"', "sh"),
    ('cd {{x}}; $PWD', "$PWD"),
    ('cd {{x}}; sh -c "$(/bin/pwd)"', "sh"),
    ('cd {{x}}; sh -c "$(cd .; pwd)"', "sh"),
    ("cd {{x}}; pwd | xargs sh -c", "sh"),
    ("cd {{x}}; pwd > f; sh f", "sh"),
])
def test_pushd_dirs_and_pwd_as_a_command_hold_the_value(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


@pytest.mark.parametrize("command", ['cd {{x}} && ls', 'cd {{x}} && printf "%s\\n" "$PWD"', 'cd src && sh -c "$PWD"',
                                     'cd {{x}}; pwd; printf "%s" "$(pwd)"', "cd src; pwd | sh"])
def test_the_folder_stays_data_where_it_is_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 3. files written and run

@pytest.mark.parametrize("command, program", [
    ("printf '%s' {{x}} > g; split -b 1000 g part; sh partaa", "sh"),
    ("printf '%s' {{x}} > g; csplit -s g 1; sh xx00", "sh"),
    ("printf '%s' {{x}} > g; chmod +x g; find . -name g -exec {} \\;", "find -exec {}"),
    ("sh -c 'printf %s \"$1\" > g' _ {{x}}; sh g", "sh"),
    ("printf %s {{x}} | sh -c 'cat > g'; sh g", "sh"),
    ("printf %s {{x}} | ( cat > g ); sh g", "sh"),
    ("printf %s {{x}} | { cat > g; }; sh g", "sh"),
    ("printf %s {{x}} > g; tar xf g; sh anything", "sh"),
    ("printf '%s' {{x}} > g; chmod +x g; find . -name g -exec true \\; -exec {} \\;", "find -exec {}"),
    ("printf '%s' {{x}} > g; chmod +x g; find . -name g -execdir ./{} \\;", "find -exec {}"),
])
def test_a_file_written_under_a_name_not_spelt_out_and_run_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", HANDED.format(program))


@pytest.mark.parametrize("command, value", [
    ("printf '%s' {{x}} | awk '{ print > \"g\" }'; sh g", "touch marker"),
    ("awk 'BEGIN { print ARGV[1] > \"g\" }' {{x}}; sh g", "touch marker"),
    ("printf '%s\\n' {{x}} | sed -n 'w g'; sh g", "touch marker"),
    ("printf '%s' {{x}} | sort -o g; sh g", "touch marker"),
    ("python3 -c 'import sys; open(\"f.sh\", \"w\").write(sys.argv[1])' {{x}}; sh f.sh", "touch marker"),
    ("python3 -c 'import sys; open(\"f.sh\", \"w\").write(sys.argv[1])' {{x}}; sh < f.sh", "touch marker"),
    ("python3 -c 'import sys; open(\"f.sh\", \"w\").write(sys.argv[1])' {{x}}; cat f.sh | sh", "touch marker"),
])
def test_a_program_that_may_write_files_by_its_own_logic_then_a_run_of_a_file_is_td803(tmp_path, capsys, monkeypatch,
                                                                                    command, value):
    """Every program but those known to write no file (shell.WRITES_NOTHING), given a value, may have written any
    file: a later run of a file fails closed."""
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", HANDED.format("sh"))


@pytest.mark.parametrize("command", [
    "NODE_ENV={{x}} node app.js",  # what the only writer runs, it has read before it writes
    "awk -f prog.awk -- {{x}}",
    "python3 process.py {{x}}",
    "grep -- {{x}} notes.txt; sh ./report.sh",  # grep writes no file
    "timeout 5 grep -- {{x}} notes.txt; sh ./report.sh",
    "python3 gen.py {{x}}; echo hi | sh",  # sh runs what echo prints, not a file
])
def test_a_program_that_may_write_files_alone_or_before_no_run_of_a_file_stays_data(command):
    assert codes(command) == []


def test_a_run_of_a_file_after_a_program_that_may_write_one_is_td803():
    assert codes("python3 process.py {{x}}; python3 report.py") == [("TD803", shell.HANDED + "python3")]
    assert codes("curl -s -o g {{x}}; sh g") == [("TD803", shell.HANDED + "sh")]
    assert codes('python3 gen.py {{x}}; sh -c "$(cat f)"') == [("TD803", shell.HANDED + "sh")]
    assert codes('python3 gen.py {{x}}; eval "$(cat f)"') == [("TD803", shell.HANDED + "eval")]
    # a program given a file that holds a value may write any file too
    assert codes("printf %s {{x}} > f; python3 p.py f; sh out.sh") == [("TD803", shell.HANDED + "sh")]
    assert codes("printf %s {{x}} > f; python3 p.py f") == []


@pytest.mark.parametrize("command, value, program", [
    ("printf %s {{x}} > g.js; node -r ./g.js -e 0", "require('fs').writeFileSync('marker','')", "node -r"),
    ("printf %s {{x}} > g.pm; perl -I. -Mg -e 1", "system('touch marker'); 1;", "perl -Mg"),
    ("printf %s {{x}} > g.rb; ruby -r ./g -e 1", "system('touch marker')", "ruby -r"),
    ("printf %s {{x}} > g.awk; gawk -i ./g.awk 'BEGIN{}'", "BEGIN{system(\"touch marker\")}", "gawk -i"),
])
def test_a_written_file_loaded_as_a_module_is_td803(tmp_path, capsys, monkeypatch, command, value, program):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", HANDED.format(program))


@pytest.mark.parametrize("command, value, program", [
    ("printf %s {{x}} > g.py; python3 -c 'import g'", "open('marker', 'w')", "python3"),
    ("printf %s {{x}} > g.pm; perl -I. -e 'use g'", "system('touch marker'); 1;", "perl"),
    ("printf %s {{x}} > g.js; node -e 'require(\"./g.js\")'", "require('fs').writeFileSync('marker','')", "node"),
    ("printf %s {{x}} > g; env -C . sh g", "touch marker", "sh"),  # "." may be -C's value, or the program
])
def test_interpreter_code_that_names_a_written_file_is_td803(tmp_path, capsys, monkeypatch, command, value, program):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD803", HANDED.format(program))


def test_interpreter_code_that_reads_a_written_file_by_an_argument_stays_data():
    assert codes("printf %s {{x}} > out.txt; python3 -c 'import sys; print(open(sys.argv[1]).read())' out.txt") == []
    # naming the file in the code is refused (it may load it): fail closed
    assert codes("printf %s {{x}} > out.txt; python3 -c 'print(open(\"out.txt\").read())'") == [
        ("TD803", shell.HANDED + "python3")]


@pytest.mark.parametrize("command", [
    "printf %s {{x}} > out.txt; sh ./build.sh",
    "printf '%s' {{x}} | xargs -0 sh -c 'printf \"[%s]\" \"$1\" >> out' _",
    "printf %s {{x}} | ( cat > out.txt ); wc -c out.txt",
    "printf %s {{x}} > g; node app.js",
    "find . -name {{x}} -print",
])
def test_a_written_file_nothing_runs_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 4. wrappers with subcommands

@pytest.mark.parametrize("command, program", [
    ("uv run python3 -c {{x}}", "python3"),
    ("poetry run python3 -c {{x}}", "python3"),
    ("pipx run python3 -c {{x}}", "python3"),
    ("pdm run sh -c {{x}}", "sh"),
    ("hatch run sh -c {{x}}", "sh"),
    ("conda run -n base sh -c {{x}}", "sh"),
    ("docker exec c sh -c {{x}}", "sh"),
    ("docker run img sh -c {{x}}", "sh"),
    ("podman exec c sh -c {{x}}", "sh"),
    ("kubectl exec p -- sh -c {{x}}", "sh"),
    ("npm exec -- sh -c {{x}}", "sh"),
    ("npx sh -c {{x}}", "sh"),
    ("pnpm dlx sh -c {{x}}", "sh"),
    ("yarn exec sh -c {{x}}", "sh"),
    ("bunx sh -c {{x}}", "sh"),
    ("nix shell nixpkgs#hello -c sh -c {{x}}", "sh"),
    ("nix develop -c sh -c {{x}}", "sh"),
    ("direnv exec . sh -c {{x}}", "sh"),
    ("mise exec -- sh -c {{x}}", "sh"),
    ("uv run --with pkg sh -c {{x}}", "sh"),
])
def test_the_command_a_wrapper_with_a_subcommand_runs_is_read(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is in text that `{program}` parses again as code")


@pytest.mark.parametrize("command, wrapper", [
    ("uv run {{x}}", "uv run"),  # the value is the command
    ("uv pip install {{x}}", "uv pip"),  # a subcommand the table does not know (installs run a package's code)
    ("npm install {{x}}", "npm install"),
    ("uv run --frozen script.py {{x}}", "uv run"),  # --frozen may take script.py as its value
    ("docker --context c exec box sh -c \"$1\" _ {{x}}", "docker c"),
    ("docker exec -i box sh -c \"$1\" _ {{x}}", "docker exec"),
])
def test_a_value_where_a_wrapper_s_command_may_start_fails_closed(tmp_path, capsys, monkeypatch, command, wrapper):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803",
            f"is an argument of `{wrapper}`, which runs a command given after its own options and operands")


def test_echo_piped_into_a_wrapped_shell_is_td803():
    assert codes("echo {{x}} | docker exec -i c sh") == [("TD803", "sh")]
    assert codes("echo {{x}} | uv run sh") == [("TD803", "sh")]


@pytest.mark.parametrize("command", [
    "uv run python3 script.py {{x}}",
    "uv run -- python3 script.py {{x}}",
    "uv run --frozen -- python3 script.py {{x}}",
    "docker exec c ls {{x}}",
    "kubectl exec pod -- ls {{x}}",
    "npx prettier --check {{x}}",
    "nix shell nixpkgs#jq -c jq . {{x}}",
])
def test_a_value_the_wrapped_command_reads_as_data_stays_data(command):
    assert codes(command) == []


def test_ssh_joins_its_words_into_a_remote_shell_s_code(tmp_path, capsys, monkeypatch):
    """Held by the table before (ssh's operands after the host are code): kept with the wrappers it belongs to."""
    refused(tmp_path, capsys, monkeypatch, "ssh localhost echo {{x}}", "touch marker", "TD803",
            "is in text that `ssh` parses again as code")


# ---------------------------------------------------------------- 5. variables read as code

@pytest.mark.parametrize("command, name", [
    ("echo hi > f; ZIP={{x}} zip -q a.zip f", "ZIP"),
    ("echo hi > f; GZIP={{x}} gzip f", "GZIP"),
    ("echo hi > f; BZIP2={{x}} bzip2 f", "BZIP2"),
    ("OPENSSL_CONF={{x}} openssl version", "OPENSSL_CONF"),
    ("export RUSTC_WRAPPER={{x}}; cargo build", "RUSTC_WRAPPER"),
    ("env ZIPOPT={{x}} zip -q a.zip f", "ZIPOPT"),
])
def test_a_value_in_an_upper_case_variable_is_code_unless_the_name_is_data(tmp_path, capsys, monkeypatch, command,
                                                                          name):
    refused(tmp_path, capsys, monkeypatch, command, "-T -TT=./evil", "TD803",
            f"is the value of ${name}, which the shell or a program reads as code (expanded, run or loaded): the "
            f"value would become code; pass it in a variable whose name has a lower-case letter, or read it from "
            f"$TASKDSL_INPUT_X")


@pytest.mark.parametrize("command", [
    "zip_opts={{x}}; printf '%s' \"$zip_opts\"",
    "LANG={{x}} ls",
    "LC_ALL={{x}} sort f",
    "TASKDSL_NOTE={{x}} printenv TASKDSL_NOTE",
    "GIT_AUTHOR_NAME={{x}} git commit -m hi",
    "NO_PROXY={{x}} curl -s http://127.0.0.1:9/",
    "NODE_ENV={{x}} node app.js",
])
def test_names_that_are_data_stay_data(command):
    assert codes(command) == []


@pytest.mark.parametrize("unit", ["npx -y ", "docker exec -i c ", "uv run --with b "])
def test_wrappers_nested_in_each_other_are_read_in_linear_work(monkeypatch, unit):
    """Each wrapper reads its command from up to a few words; one read from several words reads no further wrapper
    the same way (it fails closed), so wrappers nested in each other cost work linear in their number (a chain of 40
    `npx -y` once took 2^40 readings)."""
    calls = []
    original = shell._run_subcommand

    def counted(*args):
        calls.append(1)
        return original(*args)
    monkeypatch.setattr(shell, "_run_subcommand", counted)
    for n in (10, 40):
        calls.clear()
        shell._analysis.cache_clear()
        assert [code for code, _ in codes(unit * n + "sh -c {{x}}")] == ["TD803"]
        assert len(calls) <= 8 * n


def _wrapped(program, sub, skip, command):
    words = [program] + ([sub] if sub else [])
    words += ["pkg", skip.split()[0]] if isinstance(skip, str) else ["box"] * skip
    return " ".join(words) + " " + command


@pytest.mark.parametrize("program, sub, skip", [(p, s, k) for p, subs in shell.RUN_SUBCOMMANDS.items()
                                                for s, k in subs.items()])
def test_every_wrapper_of_the_table_runs_the_command_after_its_operands(program, sub, skip):
    # (npm's own -c runs a command too: the table of programs says so first)
    assert codes(_wrapped(program, sub, skip, "sh -c {{x}}")) == [("TD803", "sh" if program != "npm" else "npm")]
    assert codes(_wrapped(program, sub, skip, "ls -- {{x}}")) == []
    assert codes(_wrapped(program, sub, skip, "{{x}}")) == [("TD803", shell.RUNS + f"{program} {sub}".strip())]


# ---------------------------------------------------------------- programs whose operand is a program of their own

@pytest.mark.parametrize("command, program", [
    ('jq ".a + {{x}}" f.json', "jq"),  # the filter: it reads $ENV and files
    ("jq -n {{x}}", "jq"), ("gojq {{x}}", "gojq"), ("yq {{x}} f.yml", "yq"), ("jq -- {{x}}", "jq"),
    ("jq -f {{x}} f.json", "jq"), ("jq --indent 2 {{x}}", "jq"), ("printf %s {{x}} | jq -f /dev/stdin", "jq"),
    ("echo 1 | dc -e {{x}}", "dc"), ("printf %s {{x}} | dc", "dc"),  # dc runs !command
    ("printf %s {{x}} | m4", "m4"),  # m4 runs syscmd(…)
    ("duckdb -c {{x}}", "duckdb"), ("mlr -n put {{x}}", "mlr"), ("R -e {{x}}", "R"), ("osascript -e {{x}}", "osascript"),
])
def test_a_value_in_a_programs_own_language_is_td803(command, program):
    assert ("TD803", program) in codes(command)


@pytest.mark.parametrize("command", [
    'jq --arg v {{x}} ".a + $v" f.json',  # jq's own way to take a value: data
    'jq -r --arg v {{x}} --argjson w 1 ".a" f.json', 'jq ".a" {{x}}', 'jq --args ".a" {{x}}',
    'printf %s {{x}} | jq -R .',
])
def test_a_value_jq_reads_as_data_stays_data(command):
    assert codes(command) == []


def test_a_jq_filter_from_a_value_runs_nothing_and_reads_no_environment(tmp_path, capsys, monkeypatch):
    """The filter `$ENV | keys` printed every variable name of the run's environment; a value is refused instead."""
    refused(tmp_path, capsys, monkeypatch, 'echo "{}" | jq ".a + {{x}}"', "$ENV", "TD803", "`jq`")


# ---------------------------------------------------------------- 6. shell code written inside "…"
# The shell removes the backslashes of "\$1" before sh -c reads the script: the script is $1, which runs the value.
# Every reading of a word's text as code takes the text the shell hands over (shell._unquoted, through _literal).

@pytest.mark.parametrize("command, program", [
    ('sh -c "\\$1" _ {{x}}', "sh"),
    ('bash -c "eval \\"\\$1\\"" _ {{x}}', "bash"),
    ('sh -c "sh -c \\"\\$1\\" _ \\"\\$1\\"" _ {{x}}', "sh"),  # nested
    ('sh -c "a=\\$1; \\$a" _ {{x}}', "sh"),
    ('env sh -c "\\$1" _ {{x}}', "sh"),
    ('timeout 5 sh -c "\\$1" _ {{x}}', "sh"),
])
def test_a_script_in_double_quotes_is_read_as_the_shell_hands_it_over(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", HANDED.format(program))


@pytest.mark.parametrize("command, program", [
    ('sh -c "\\${1}" _ {{x}}', shell.HANDED + "sh"),
    ('sh -c "\\$*" _ {{x}}', shell.HANDED + "sh"),
    ('bash -c "\\${@}" _ {{x}}', shell.HANDED + "bash"),
    ('sh -c "\\$0" {{x}}', shell.HANDED + "sh"),
    ('sh -c "x=\\"\\$1\\"; \\$x" _ {{x}}', shell.HANDED + "sh"),
    ('find . -maxdepth 0 -exec sh -c "\\$1" _ {{x}} \\;', shell.HANDED + "sh"),
    ('xargs -I{} sh -c "\\$1" _ {{x}}', shell.HANDED + "sh"),
    ('echo {{x}} | xargs -I{} sh -c "\\$1" _ {}', "sh"),
    # su USER ARG…: the arguments after the user are its shell's (util-linux), so its -c script's $1
    ('su -c "\\$1" root -- _ {{x}}', "su"),
    ('su -c \'$1\' root _ {{x}}', "su"),
])
def test_double_quoted_scripts_through_wrappers_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    'sh -c "printf \'%s\\n\' \\"\\$1\\"" _ {{x}}',  # the script reads $1 as data
    'bash -c "echo \\"\\$1\\" >&2" _ {{x}}',
    'sh -c "echo \\\\\\$1" _ {{x}}',  # \\\$1: a backslash and the text $1, no expansion
])
def test_double_quoted_scripts_that_read_their_arguments_as_data_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 7. a program named at run time
# It may be alias, trap, eval or ., whose literal arguments make a later word code: every other value of the command
# is TD803 (fail closed). The corpus keeps its codes: its one command named at run time is a value alone (018).

NAMED = "is in a command that names a program at run time (`{}`), which may be alias, trap, eval or . and make a " \
        "later word of the command code: the value would become code; name every program of the command in it"


@pytest.mark.parametrize("command, shown", [
    ("say=alias; $say greet=eval\ngreet echo {{x}}", "$say"),
    ("set -- eval 'g() { sh -c \"$1\"; }'; \"$@\"; g {{x}}", '"$@"'),
    ("for a in alias; do $a e=eval; done\ne {{x}}", "$a"),
])
def test_a_program_named_at_run_time_makes_the_other_values_code(tmp_path, capsys, monkeypatch, command, shown):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", NAMED.format(shown))


def test_a_trap_named_at_run_time_is_td803(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "cleanup=trap; $cleanup 'eval \"$r\"' EXIT; r={{x}}; echo \"$r\"",
            "touch marker", "TD803", HANDED.format("$cleanup"))


@pytest.mark.parametrize("command", [
    "f=command; $f eval 'g() { eval \"$1\"; }'; g {{x}}",
    "f=.; printf 'g() { eval \"$1\"; }' > lib.sh; $f ./lib.sh; g {{x}}",
    "set -- trap 'eval \"$r\"' EXIT; \"$@\"; r={{x}}",
    "$f a; echo {{x}}",
    "$f; echo {{x}}",  # unquoted: the shell splits it into words, a program and its arguments
    "{{x}} greet=eval; greet echo {{y}}",  # a value that names a program makes the other values code
    "say=alias; command $say greet=eval; greet echo {{x}}",  # the program a wrapper runs
    "say=alias; builtin $say greet=eval; greet echo {{x}}",
    "env $f a; echo {{x}}",
    "x=$(timeout 5 \"$@\"); echo {{x}}",
    "nice {{x}}; echo {{y}}",
])
def test_every_value_beside_a_program_named_at_run_time_is_td803(command):
    found = codes(command)
    assert found and all(code == "TD803" for code, _ in found)
    assert len(found) == command.count("{{") - command.startswith(("{{", "nice {{"))


@pytest.mark.parametrize("command", [
    "{{x}} --version",  # the value names the program, as {{x}} alone: its arguments hold no value
    "{{x}}",
    "nice {{x}}",  # through a wrapper too
    "command {{x}} --version",
    '"$f"; echo {{x}}',  # one word, no argument: no alias, trap or eval can be given code
    'cmd=ls; "$cmd"; printf "%s" {{x}}',
])
def test_a_program_named_at_run_time_without_arguments_or_by_the_value_alone_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 8. variables read as code, other spellings

CODE_VARIABLE = "is the value of ${}, which the shell or a program reads as code"


@pytest.mark.parametrize("command, name", [
    ('s={{x}}; : "${GIT_SSH_COMMAND:=$s}"; export GIT_SSH_COMMAND; git --version', "GIT_SSH_COMMAND"),
    ('s={{x}}; : "${GIT_SSH_COMMAND=$s}"; export GIT_SSH_COMMAND; git --version', "GIT_SSH_COMMAND"),
    ('r={{x}}; env "$(echo GIT_SSH_COMMAND)=$r" git --version', "…"),  # a name computed at run time
])
def test_a_code_variable_assigned_in_another_spelling_is_td803(tmp_path, capsys, monkeypatch, command, name):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", CODE_VARIABLE.format(name))


@pytest.mark.parametrize("command, program", [
    ('r={{x}}; : "${PS4:=$r}"; set -x', "what reads $PS4"),
    ('r={{x}}; : "${PS4=$r}"; set -x', "what reads $PS4"),
    (': "${GIT_SSH_COMMAND:=$s}"; s={{x}}; git fetch', "what reads $GIT_SSH_COMMAND"),
    ("r={{x}}; eval ': ${GIT_SSH_COMMAND:=$r}'; git fetch", "what reads $GIT_SSH_COMMAND"),
    ("declare -n p=GIT_SSH_COMMAND; p={{x}}; export GIT_SSH_COMMAND; git fetch", "what reads $GIT_SSH_COMMAND"),
    ("typeset -n p=GIT_SSH_COMMAND; r={{x}}; p=$r; git fetch", "what reads $GIT_SSH_COMMAND"),
    ('declare -n p="$n"; p={{x}}', "what reads $…"),
    ("r={{x}}; export r; git --config-env=core.sshCommand=r ls-remote ssh://h/r", shell.HANDED + "git"),
])
def test_code_variables_through_defaults_namerefs_and_config_env_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    's={{x}}; : "${name:=$s}"; printf "%s" "$name"',
    "declare -n p=mylist; p={{x}}",
    "r={{x}}; export r; git --config-env=user.name=r commit -m hi",
    'r={{x}}; env "name=$r" printenv name',
])
def test_data_variables_in_those_spellings_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 9. literal code in other code positions
# Literal code given to a code option or a code variable (not a shell's -c, eval or trap) is read as shell code, for
# the files it runs and the variables it expands; what the grammar cannot parse runs anything (fail closed).

@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} > note.txt; tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='sh note.txt' "
     "note.txt", "sh"),
    ("printf '%s\\n' {{x}} > w.sh; GIT_SSH_COMMAND='sh w.sh' git ls-remote ssh://example.invalid/r", "sh"),
    ("r={{x}}; export r; GIT_SSH_COMMAND='eval \"$r\"' git ls-remote ssh://example.invalid/r", "$GIT_SSH_COMMAND"),
])
def test_literal_code_in_a_code_position_is_read_for_files_and_variables(tmp_path, capsys, monkeypatch, command,
                                                                         program):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", HANDED.format(program))


@pytest.mark.parametrize("command, program", [
    ("echo {{x}} > f; git -c alias.x='!sh f' x", "sh"),
    ("echo {{x}} > f; git -c core.sshCommand='sh f' ls-remote ssh://h/r", "sh"),
    ("echo {{x}} > f; git -c core.pager='sh f' -p log", "sh"),
    ("echo {{x}} > f; tar -cf /dev/null -I 'sh f' f", "sh"),
    ("echo {{x}} > f; ssh -o ProxyCommand='sh f' h", "sh"),
    ("echo {{x}} > f; ssh -o 'ProxyCommand sh f' h", "sh"),
    ("echo {{x}} > f; ssh -oProxyCommand='sh f' h", "sh"),
    ("echo {{x}} > f; env -S 'sh f'", "sh"),
    ("echo {{x}} > f; make --eval='all: ; sh f' -f /dev/null", "make"),
    ("echo {{x}} > f; zip -T -TT 'sh f' z.zip f", "sh"),
    ("echo {{x}} > f; rsync -e 'sh f' a b", "sh"),
    ("echo {{x}} > f; sort --compress-program='sh f' a", "sh"),
    ("echo {{x}} > f; PAGER='sh f' man ls", "sh"),
    ("echo {{x}} > f; env GIT_EXTERNAL_DIFF='sh f' git diff", "sh"),
    ("echo {{x}} > f; PROMPT_COMMAND='sh f' bash -ic :", "sh"),
    ("r={{x}}; export r; git -c core.sshCommand='eval \"$r\"' ls-remote ssh://h/r", "git"),
    ("r={{x}}; export r; git -c alias.x='!eval \"$r\"' x", "git"),
    ("r={{x}}; export r; tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='sh -c \"eval \\\"\\$r\\\"\"' f",
     "tar"),
    ("r={{x}}; export r; env -S 'sh -c \"eval \\\"\\$r\\\"\"'", "env"),
    ("r={{x}}; export r; zip -T -TT 'eval \"$r\" #' z.zip f", "zip"),
    ("r={{x}}; export r; ssh -o ProxyCommand='eval \"$r\"' h", "ssh"),
    ("r={{x}}; export r; env GIT_SSH_COMMAND='eval \"$r\"' git fetch", "$GIT_SSH_COMMAND"),
])
def test_literal_code_of_every_code_position_is_read(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


@pytest.mark.parametrize("command", [
    "echo {{x}} > out.txt; git -c alias.x='!echo hi' x",
    "r={{x}}; GIT_SSH_COMMAND='ssh -i key' git fetch",
    "r={{x}}; tar --checkpoint=1 --checkpoint-action=exec='echo hi' -cf a.tar .",
    "r={{x}}; export r; ssh -o ProxyCommand='nc %h %p' h",
    "echo {{x}} > out.txt; git -c core.sshCommand='ssh -o BatchMode=yes' ls-remote ssh://h/r",
    # a variable's value that is no shell code names no written file and no variable holding a value
    "PATTERN='^(foo|bar)$'; echo {{x}} > out.txt; grep -E \"$PATTERN\" out.txt",
    "r={{x}}; Q='it is (x'; printf '%s' \"$r\"",
])
def test_literal_code_that_runs_no_written_file_and_no_value_stays_data(command):
    assert codes(command) == []


@pytest.mark.parametrize("command, program", [
    ("echo {{x}} > f; LESSOPEN='|sh f' less a", "$LESSOPEN"),  # text that is no shell code: the names it holds
    ("r={{x}}; export r; Q='(eval \"$r\"' x", "$Q"),
])
def test_literal_code_the_grammar_cannot_parse_runs_what_it_names(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


def test_literal_code_that_may_run_its_standard_input_counts_as_running_a_written_file():
    # fail closed: ssh with no remote command runs its standard input in the remote shell
    assert codes("echo {{x}} > out.txt; GIT_SSH_COMMAND='ssh -i key' git fetch") == [("TD803", shell.HANDED + "ssh")]


@pytest.mark.parametrize("command, program", [
    ("echo {{x}} > f; env -S 'A=1 sh f'", "sh"),  # a command line's own assignments stay its own
    ("echo {{x}} > f; env -SA=1\\ sh\\ f", "sh"),
    ("r={{x}}; export r; make --eval='all: ; eval \"$$r\"' -f /dev/null", "make"),  # make's $$ is the shell's $
])
def test_literal_code_is_read_after_its_option_and_setting_only(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


# ---------------------------------------------------------------- 10. printf and wait options through a variable

@pytest.mark.parametrize("command, program", [
    ('r={{x}}; printf "$r" x', "printf"),  # bash: a value -va[$(cmd)] is printf -v with a subscript that runs cmd
    ('r={{x}}; sleep 0 & wait "$r"', "wait"),
])
def test_a_value_handed_on_to_printf_or_wait_option_position_is_td801(command, program):
    assert [(site.context, site.program) for site in shell.sites(command) if site.code] == [("name_option", program)]


def test_printf_s_format_through_a_variable_is_refused_by_the_cli(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, 'r={{x}}; printf "$r" x', "-va[$(touch marker)]", "TD801",
            "where bash's printf or wait reads a leading '-' as an option")


@pytest.mark.parametrize("command", ['r={{x}}; printf -- "$r" x', 'r={{x}}; printf "%s" "$r"'])
def test_printf_with_the_value_after_its_options_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 11. find -execdir changes directory

@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | find /dev -maxdepth 1 -name stdin -execdir sh stdin \\;",
    "printf '%s\\n' {{x}} | find /dev/fd/ -maxdepth 1 -name 0 -execdir sh 0 \\;",
])
def test_find_execdir_runs_a_relative_script_in_the_folder_found(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "`sh`")


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | find / -name stdin -okdir sh stdin \\;",  # / holds /dev
    "printf '%s\\n' {{x}} | find \"$d\" -name a.sh -execdir sh a.sh \\;",  # a root named at run time
    "printf '%s\\n' {{x}} | find ../.. -name a.sh -execdir sh a.sh \\;",
])
def test_find_execdir_under_a_root_that_may_hold_dev_is_td803(command):
    assert codes(command) == [("TD803", "sh")]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | find . -name a.sh -execdir sh a.sh \\;",
    'find src -name "*.txt" -execdir wc -l {} \\; ; echo {{x}}',
])
def test_find_execdir_under_a_folder_of_the_command_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 12. git subcommands' options that run a program

@pytest.mark.parametrize("command", [
    "git send-email --sendmail-cmd={{x}} a.patch",
    "git send-email --sendmail-cmd {{x}} a.patch",
    "git send-email --smtp-server={{x}} a.patch",  # a path that starts with / is a program git runs
    "git daemon --access-hook={{x}}",
    "git instaweb --httpd={{x}}",
])
def test_git_subcommand_options_that_run_a_program_are_code(command):
    assert codes(command) == [("TD803", "git")]


@pytest.mark.parametrize("command", [
    "echo {{x}} > f; git send-email --sendmail-cmd='sh f' a.patch",
    "echo {{x}} > f; git rebase -x 'A=1 sh f' main",  # a command's own assignment is not a setting
    "echo {{x}} > f; tar --to-command='A=1 sh f' -xf a.tar",
])
def test_literal_code_of_git_subcommands_and_commands_with_assignments_is_read(command):
    assert codes(command) == [("TD803", shell.HANDED + "sh")]


@pytest.mark.parametrize("command", [
    "git send-email --to={{x}} a.patch",
    "git rebase -x 'make test' main; echo {{x}}",
])
def test_git_subcommand_data_options_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 11b. find -exec's command has find's standard input

@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | find /dev -maxdepth 1 -name stdin -exec sh {} \\;",  # {}: a script path named at run time
    "printf '%s\\n' {{x}} | find /dev -maxdepth 1 -name stdin -exec sh {} +",
])
def test_find_exec_sh_of_the_file_found_runs_find_s_standard_input(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "`sh`")


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | find /dev/fd/ -name 0 -exec sh {} \\;", "sh"),
    ("echo {{x}} | find /dev -name stdin -exec awk -f {} \\;", "awk"),
    ("echo {{x}} | find . -exec sh \\;", "sh"),
])
def test_find_exec_of_a_program_that_runs_its_standard_input_is_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    'find . -name "*.sh" -exec sh {} \\; ; echo {{x}}',  # find's standard input holds no value
    "echo {{x}} | find . -name a -exec cat {} \\;",
    'echo {{x}} | find . -exec sh -c "cat" \\;',
])
def test_find_exec_that_runs_no_standard_input_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 13. programs that run code given to an option

@pytest.mark.parametrize("command, program", [
    ("socat - EXEC:{{x}}", "socat"),  # every address is code: EXEC:, SYSTEM:
    ("ncat --sh-exec {{x}} h 1", "ncat"),
    ("nc -e {{x}} h 1", "nc"),
    ("gnuplot -e {{x}}", "gnuplot"),
    ("echo {{x}} | gnuplot", "gnuplot"),
    ("guile -c {{x}}", "guile"),
    ("erl -eval {{x}}", "erl"),
    ("elixir -e {{x}}", "elixir"),
    ("lldb -o {{x}}", "lldb"),
    ("parallel {{x}} ::: a", "parallel"),  # its command template runs through a shell
])
def test_programs_that_run_code_given_to_an_option_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", ["nc -z h {{x}}", "elixir script.exs {{x}}", "gnuplot plot.gp {{x}}"])
def test_their_data_arguments_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- perl -n/-p: <> opens its operands

@pytest.mark.parametrize("command", ["perl -ne 'print' -- {{x}}", "perl -ne 'print' {{x}}", "perl -lane 'print' {{x}}",
                                     "perl -pi.bak -e 's/a/b/' -- {{x}}"])
def test_perl_looping_over_its_operands_opens_a_value_as_a_command(tmp_path, capsys, monkeypatch, command):
    """perl -n/-p reads its operands with <>, whose two-argument open runs a name ending in `|`: `touch marker|` ran,
    and TD805's own quick fix (insert `--`) led there."""
    refused(tmp_path, capsys, monkeypatch, command, "touch marker|", "TD803", "`perl`")


def test_perl_given_a_value_as_an_argument_of_its_code_stays_data():
    assert codes("perl -e 'print $ARGV[0]' -- {{x}}") == []


@pytest.mark.parametrize("command", ["docker {{x}}", "kubectl {{x}} get pods", "uv {{x}}"])
def test_a_value_as_the_subcommand_of_a_subcommand_wrapper_is_td803_not_a_crash(command):
    """`docker {{x}}` raised KeyError inside the analysis: four rules failed with tracebacks and a misleading TD804."""
    assert [code for code, _ in codes(command)] == ["TD803"]
    assert shell.parse_problem(command) is None


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | script -q /dev/null", "script"),  # an interactive shell reading its input
    ("printf '%s\\n' {{x}} | gdb -q -nx", "gdb"), ("printf '%s\\n' {{x}} | gdb -batch", "gdb"),  # shell CMD
    ("printf '%s\\n' {{x}} | runuser root", "runuser"), ("echo {{x}} | crontab -", "crontab"),
    ("strace -o {{x}} true", "strace"),  # strace -o '|cmd' runs cmd
])
def test_programs_that_run_their_input_or_an_output_name_as_commands_are_td803(command, program):
    assert ("TD803", program) in codes(command)
