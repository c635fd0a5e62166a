"""The shell shapes the eighth review found open, each through the real CLI: before the change, `taskdsl check` reported
no error and `taskdsl run --input x=…` ran a command from the value (or would have, where the program is installed).
Each is closed by a rule that fails closed (docs/security.md, "Files a command writes"):

1. once a command writes a value to a file, every file it writes is held to hold the value (a copy through a pipe,
   dd, a function whose output is redirected: the value is no longer followed through each copy);
2. a shell's or interpreter's script is found past every option it takes (+ options, long options; after an option
   the program is not known to take, every later word may be the script);
3. a written file (or a <(…) holding a value) given to a program not known to read its files only as data is code
   there (fish f, pwsh -File f, R -f f, jq -f f, deno run - < f, crontab <(…)); parallel and lldb run their standard
   input, mlr its -f /dev/stdin; strace --output=… is -o; runuser - USER is runuser -l USER.

The variants that carry data still check clean and run."""

import pytest

from taskdsl.language import shell

from tests.security.test_shell_review import codes, ran
from tests.security.test_shell_review import refused as refused_with

HANDED = "is handed on (in a variable, the positional parameters or a file the command writes) to `{}`, which " \
         "parses it again as code: the value would become code; keep it out of code (pass it to a program as an " \
         "argument it reads as data, and run no variable or file that holds it)"
REPARSE = "is in text that `{}` parses again as code: the value would become code; pass it as an argument after the " \
          "code and read it there (sys.argv, ARGV, process.argv, awk -v), or from $TASKDSL_INPUT_X"


def refused(tmp_path, capsys, monkeypatch, command, value, message):
    """check reports TD803 with message; run refuses (exit 2) with TD803; the value runs nothing."""
    refused_with(tmp_path, capsys, monkeypatch, command, value, "TD803", message)

SH = "touch marker"
PYTHON = "open('marker', 'w')"
NODE = "require('fs').writeFileSync('marker', '')"
PERL = "system('touch marker')"
AWK = 'BEGIN { system("touch marker") }'


# ---------------------------------------------------------------- 1. every file a command writes holds its value

@pytest.mark.parametrize("command, value, program", [
    ("printf '%s' {{x}} > f; cat f | cat > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; rev f | rev > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; tac f | tac > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; base64 -w0 f | base64 -d > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; dd if=f status=none | cat > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; dd if=f of=g status=none; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; dd if=f status=none > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; sh -c 'cat f' > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; xxd f | xxd -r > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; xxd -p f > h; xxd -r -p h g; sh g", SH, "sh"),  # xxd's output operand
    ("printf '%s' {{x}} > f; cat f | cat > g; . ./g", SH, "."),
    ("printf '%s' {{x}} > f; cat f | cat > g.sh; bash g.sh", SH, "bash"),
    ("printf '%s' {{x}} > f; cat f | cat > g; chmod +x g; ./g", SH, "./g"),
    ("printf '%s' {{x}} > f; cat f | cat > g; node g", NODE, "node"),
    ("printf '%s' {{x}} > f; cat f | cat > g; perl g", PERL, "perl"),
    ("printf '%s' {{x}} > f; cat f | cat > g; python3 g", PYTHON, "python3"),
    ("printf '%s' {{x}} > f; cat f | cat > g; awk -f g", AWK, "awk"),
    ("printf '%s' {{x}} > f; g() { cat f; }; g > h; sh h", SH, "sh"),  # a function whose output is redirected
    ("printf '%s' {{x}} > f; cat f | cat >> g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f || true; cat f | cat > g; sh g", SH, "sh"),
    ("printf '%s' {{x}} > f; if true; then cat f | cat > g; fi; sh g", SH, "sh"),
])
def test_a_file_written_from_a_written_file_any_way_and_run_is_td803(tmp_path, capsys, monkeypatch, command, value,
                                                                      program):
    refused(tmp_path, capsys, monkeypatch, command, value, HANDED.format(program))


@pytest.mark.parametrize("command, program", [
    ("printf '%s' {{x}} > f; { cat f; } > g; sh g", "sh"),
    ("printf '%s' {{x}} > f; (cat f) > g; sh g", "sh"),
    ("printf '%s' {{x}} > f; cat f | tr a a > g; source g", "source"),
    ("printf '%s' {{x}} > f; cat f | cat > g; timeout 5 sh g", "sh"),
])
def test_every_file_written_after_a_value_is_held_to_hold_it(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


@pytest.mark.parametrize("command", [
    "printf '%s' {{x}} > f; wc -c f",
    "printf '%s' {{x}} > f; cat f | sort > g; cat g",
    "printf '%s' {{x}} > out; bash -e script.sh",  # a script the command did not write
    "printf '%s' {{x}} > out; bash -e script.sh out",  # the written file as the script's argument: data
    "printf '%s' {{x}} > data.json; jq -f filter.jq data.json",  # a filter the command did not write
    "printf '%s' {{x}} > in.txt; python3 p.py in.txt",
    "printf '%s' {{x}} > f; timeout 5 cat f; nice -n 5 sort f",
    "printf '%s' {{x}} > in.txt; make all",  # make reads its makefile, which the command did not write
    "printf '%s' {{x}} > msg.txt; git add msg.txt; git commit -F msg.txt",  # git reads its files as data
    "gcc -o app main.c && ./app {{x}}",  # no value written to a file: the program built is run with it as data
    "curl -o page.html https://example.com; python3 p.py {{x}}",
    "pandoc a.md -o b.html; ./notify {{x}}",
    "f() { printf '[%s]' {{x}} >> out; }; f; sh ./build.sh",  # a function's call writes what its body writes
    "while true; do env FOO=bar printf '[%s]' {{x}} >> out; break; done",  # break writes no file FOO names
])
def test_written_files_read_as_data_stay_data(command):
    assert codes(command) == []


def test_a_copy_through_a_pipe_read_back_runs_as_data(tmp_path, capsys, monkeypatch):
    value = "$(touch marker)`touch marker`; touch marker"
    out = ran(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} > f; cat f | sort > g; cat g", value)
    assert out.strip() == value
    assert not (tmp_path / "marker").exists()


def test_a_written_script_run_with_bash_e_of_a_script_the_command_did_not_write_runs(tmp_path, capsys, monkeypatch):
    (tmp_path / "script.sh").write_text('cat "$1"\n')
    value = "$(touch marker); touch marker"
    out = ran(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} > out; bash -e script.sh out", value)
    assert out.strip() == value
    assert not (tmp_path / "marker").exists()


# ---------------------------------------------------------------- 2. a script past every option of its program

@pytest.mark.parametrize("command, program", [
    ("printf '%s' {{x}} > f; sh +e f", "sh"),
    ("printf '%s' {{x}} > f; sh +x f", "sh"),
    ("printf '%s' {{x}} > f; sh +a f", "sh"),
    ("printf '%s' {{x}} > f; dash +e f", "dash"),
    ("printf '%s' {{x}} > f; bash +x f", "bash"),
    ("printf '%s' {{x}} > f; bash +u f", "bash"),
    ("printf '%s' {{x}} > f; bash -e +x f", "bash"),
    ("printf '%s' {{x}} > f; bash +o posix f", "bash"),
    ("printf '%s' {{x}} > f; bash +O extglob f", "bash"),
    ("printf '%s' {{x}} > f; zsh +x f", "zsh"),
    ("printf '%s' {{x}} > f; ksh +x f", "ksh"),
    ("printf '%s' {{x}} > f; bash --norc f", "bash"),
    ("printf '%s' {{x}} > f; bash --restricted f", "bash"),
    ("printf '%s' {{x}} > f; bash --rcfile /dev/null f", "bash"),
    ("printf '%s' {{x}} > f; bash --init-file /dev/null f", "bash"),
    ("printf '%s' {{x}} > f; sudo sh +e f", "sh"),
    ("printf '%s' {{x}} > f; env bash --norc f", "bash"),
    ("printf '%s' {{x}} > f; bash --rcfile f -c true", "bash"),  # the start file is code
    ("printf '%s' {{x}} > f; bash --some-new-option value f", "bash"),  # unknown: any later word may be the script
])
def test_a_shell_given_options_before_a_written_script_is_td803(tmp_path, capsys, monkeypatch, command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, HANDED.format(program))


@pytest.mark.parametrize("command, value, program", [
    ("printf '%s' {{x}} > f; python3 --check-hash-based-pycs always f", "import os; os.system('touch marker')",
     "python3"),
    ("printf '%s' {{x}} > f; R --no-save -f f", 'system("touch marker")', "R"),
    ("printf '%s' {{x}} > f; R --file f", 'system("touch marker")', "R"),
    ("printf '%s' {{x}} > f; R CMD BATCH f", 'system("touch marker")', "R"),
    ("printf '%s' {{x}} > f; deno run - < f", NODE, "deno"),
])
def test_an_interpreter_given_options_before_a_written_script_is_td803(tmp_path, capsys, monkeypatch, command,
                                                                        value, program):
    refused(tmp_path, capsys, monkeypatch, command, value, HANDED.format(program))


@pytest.mark.parametrize("command", [
    "bash -e script.sh {{x}}",
    "bash +x script.sh {{x}}",
    "bash --norc script.sh {{x}}",
    "printf '%s' {{x}} > out; bash --norc -e script.sh out",
])
def test_options_before_a_script_the_command_did_not_write_stay_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 3. programs reading code from a file or their input

@pytest.mark.parametrize("command, value, program", [
    ("printf '%s\\n' {{x}} > f; jq --from-file f", "$ENV.MY_API_KEY", "jq"),
    ("printf '%s\\n' {{x}} > f.jq; jq -n -f f.jq", "$ENV.MY_API_KEY", "jq"),
    ("printf '%s\\n' {{x}} > f; jq -n --from-file=f", "$ENV.MY_API_KEY", "jq"),
    ("printf '%s\\n' {{x}} > f; gojq -f f", "$ENV.MY_API_KEY", "gojq"),
    ("printf '%s\\n' {{x}} > f; yq -f f", "$ENV.MY_API_KEY", "yq"),
    ("printf '%s' {{x}} > f; fish f", SH, "fish"),
    ("printf '%s' {{x}} > f; csh f", SH, "csh"),
    ("printf '%s' {{x}} > f; tcsh f", SH, "tcsh"),
    ("printf '%s' {{x}} > f; pwsh -File f", SH, "pwsh"),
    ("printf '%s' {{x}} > f; R -f f", 'system("touch marker")', "R"),
    ("printf '%s' {{x}} > f; timeout 5 fish f", SH, "fish"),  # behind a wrapper
    ("printf '%s' {{x}} > f; sudo nice R -f f", 'system("touch marker")', "R"),
    ("printf '%s' {{x}} > Makefile; make", "all:\n\ttouch marker", "make"),  # make's own makefile
    ("printf '%s' {{x}} > in.txt; pandoc in.txt -o out.html", SH, "pandoc"),  # any program not known: fail closed
])
def test_a_written_file_given_to_a_program_that_may_read_it_as_code_is_td803(tmp_path, capsys, monkeypatch, command,
                                                                             value, program):
    refused(tmp_path, capsys, monkeypatch, command, value, HANDED.format(program))


def test_a_jq_filter_the_command_wrote_does_not_read_the_environment(tmp_path, capsys, monkeypatch):
    """The attack that ran: the written filter read $ENV and printed a secret shifted past masking."""
    monkeypatch.setenv("MY_API_KEY", "EnvSecretValue9876")
    refused(tmp_path, capsys, monkeypatch, "printf '%s' {{x}} > f.jq; jq -n -f f.jq",
            "$ENV.MY_API_KEY|explode|map(.+1)|implode", HANDED.format("jq"))
    assert "FowTfdsfuWbmvf" not in capsys.readouterr().out


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | parallel", "parallel"),
    ("printf '%s\\n' {{x}} | parallel sh -c", "parallel"),
    ("parallel < <(printf '%s\\n' {{x}})", "parallel"),
    ("printf '%s\\n' {{x}} | timeout 5 parallel", "parallel"),
    ("printf '%s\\n' {{x}} | lldb", "lldb"),
    ("printf '%s\\n' {{x}} | lldb -b -o run", "lldb"),
    ("printf '%s\\n' {{x}} | mlr -n put -f /dev/stdin", "mlr"),
    ("printf '%s\\n' {{x}} | mlr -n put -f -", "mlr"),
    ("crontab <(printf '%s\\n' {{x}})", "crontab"),  # the file crontab reads is a process substitution
    ("jq --from-file <(printf '%s\\n' {{x}}) data.json", "jq"),
    ("fish <(printf '%s\\n' {{x}})", "fish"),
])
def test_a_value_on_the_input_or_in_a_substitution_a_program_reads_as_code_is_td803(tmp_path, capsys, monkeypatch,
                                                                                    command, program):
    refused(tmp_path, capsys, monkeypatch, command, SH, REPARSE.format(program))


@pytest.mark.parametrize("command", [
    "diff <(printf '%s\\n' {{x}}) b.txt",
    "wc -l <(printf '%s\\n' {{x}})",
    "jq . <(printf '%s\\n' {{x}})",
    "paste <(printf '%s\\n' {{x}}) <(printf '%s\\n' {{x}})",
    "printf '%s\\n' {{x}} | jq -R .",
])
def test_a_substitution_read_as_data_stays_data(command):
    assert codes(command) == []


# ---------------------------------------------------------------- 3. strace --output=, runuser - USER

@pytest.mark.parametrize("command", ["strace --output={{x}} true", "strace --outpu={{x}} true",
                                     "strace --out={{x}} true"])
def test_strace_output_in_its_equals_form_is_code(tmp_path, capsys, monkeypatch, command):
    """strace -o '|cmd' pipes its trace into cmd: --output=… (and its abbreviations) is the same option."""
    refused(tmp_path, capsys, monkeypatch, command, "|touch marker", REPARSE.format("strace"))


def test_strace_output_to_a_fixed_file_stays_data():
    assert codes("strace --output=trace.txt true {{x}}") == []


def test_runuser_dash_user_reads_its_input_as_a_login_shell(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "printf '%s\\n' {{x}} | runuser - root", SH, REPARSE.format("runuser"))


# ---------------------------------------------------------------- a written module an interpreter loads by itself

@pytest.mark.parametrize("command, value, program", [
    ("printf '%s' {{x}} > json.py; python3 p.py", "open('marker', 'w')", "python3"),  # p.py's import json
    ("printf '%s' {{x}} > util.js; node app.js", NODE, "node"),  # app.js's require('./util')
])
def test_a_written_module_beside_the_script_an_interpreter_runs_is_td803(tmp_path, capsys, monkeypatch, command, value,
                                                                         program):
    (tmp_path / "p.py").write_text("import json\n")
    (tmp_path / "app.js").write_text("require('./util')\n")
    refused(tmp_path, capsys, monkeypatch, command, value, HANDED.format(program))


def test_a_written_data_file_an_interpreter_is_given_stays_data():
    assert codes("printf '%s' {{x}} > in.txt; python3 p.py in.txt") == []
    assert codes("printf '%s' {{x}} > out.json; node app.js out.json") == []


@pytest.mark.parametrize("written, run, program", [
    ("sitecustomize.py", "python3 p.py", "python3"), ("x.pth", "python3 p.py", "python3"),
    ("Util.pm", "perl p.pl", "perl"), ("util.rb", "ruby app.rb", "ruby"), ("lib.mjs", "node app.js", "node"),
    ("inc.php", "php index.php", "php"), ("m.lua", "lua main.lua", "lua"),
])
def test_every_module_suffix_of_an_interpreter_the_command_runs_counts(written, run, program):
    assert codes(f"printf '%s' {{{{x}}}} > {written}; {run}") == [("TD803", shell.HANDED + program)]
    assert codes(f"printf '%s' {{{{x}}}} > notes.txt; {run}") == []


# ---------------------------------------------------------------- a value exported to the programs a command runs

@pytest.mark.parametrize("command", [
    "export r={{x}}; printenv r > g; sh g",
    "r={{x}}; export r; env > g; sh g",
    "r={{x}}; export r; sh -c 'printf %s \"$r\"' > g; sh g",
    "set -a; r={{x}}; printenv r > g; sh g",
    "r={{x}}; declare -x r; printenv r > g; sh g",
    "r={{x}}; command export r; printenv r > g; sh g",
    "r={{x}}; set -o allexport; printenv r > g; sh g",
    "export r={{x}}; python3 -c 'import os; print(os.environ[\"r\"])' > g; sh g",
    "export r={{x}}; python3 -c 'import os; open(\"g\", \"w\").write(os.environ[\"r\"])'; sh g",
])
def test_a_value_exported_to_a_program_that_prints_it_into_a_file_then_run_is_td803(tmp_path, capsys, monkeypatch,
                                                                                     command):
    refused(tmp_path, capsys, monkeypatch, command, SH, HANDED.format("sh"))


@pytest.mark.parametrize("command", [
    "export r={{x}}; python3 app.py > out.txt",  # nothing runs a written file
    "export r={{x}}; printenv r > out.txt; sh build.sh",  # build.sh is not written by the command
    "r={{x}}; printenv r > g; sh g",  # r is not exported: printenv prints nothing of it
])
def test_an_exported_value_with_no_written_file_run_stays_data(command):
    assert codes(command) == []


def test_a_written_file_given_to_a_program_find_runs_is_td803():
    assert codes("printf '%s' {{x}} > g; find . -name x -exec fish g \\;") == [("TD803", shell.HANDED + "fish")]
    assert codes("printf '%s' {{x}} > g; find . -name x -exec cat g \\;") == []


@pytest.mark.parametrize("command, program", [
    ("printf '%s' {{x}} > g.c; gcc g.c", "gcc"),
    ("printf '%s' {{x}} > m.jl; julia main.jl", "julia"),
    ("printf '%s' {{x}} > m.tcl; tclsh main.tcl", "tclsh"),
    ("printf '%s' {{x}} > m.R; Rscript main.R", "Rscript"),
    ("printf '%s' {{x}} > g.cjs; node app.js", "node"),
    ("printf '%s' {{x}} > g.pyc; python3 p.py", "python3"),
])
def test_the_documented_readers_of_a_written_file_are_td803(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]


@pytest.mark.parametrize("command, program", [
    ("cd {{x}} && env > g; sh g", "sh"),  # PWD is exported (the folder cd is given was followed before)
    ("printf '%s' {{x}} > g; gdb ./g", "gdb"),
    ("printf '%s' {{x}} > g; vim g", "vim"),
])
def test_documented_shapes_that_other_rules_refused_already_stay_refused(command, program):
    assert codes(command) == [("TD803", shell.HANDED + program)]
