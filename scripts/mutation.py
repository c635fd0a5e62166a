"""Mutation testing of the guard modules (run through scripts/mutation).

For each guard module, mutmut makes small changes ("mutants") to its functions (a `<` becomes `<=`,
a string changes, an `and` becomes `or`, a call loses an argument…) and runs the tests that
exercise the module against each one. A mutant the tests do not notice ("survived") is a change
to a guard that nothing holds: docs/security.md lists every survivor with the test that now kills
it or why it is equivalent (behaves exactly like the original).

Each module runs in its own folder under build/mutation/NAME, laid out as mutmut expects (`src/`
holding the package, which is under `server/` in this repository), with only the test files that
exercise that module, and a short timeout per mutant. The tests import the mutated copy: it is
first on sys.path in mutmut's process and, through PYTHONPATH, in every process a test starts.

Usage: scripts/mutation [--jobs N] [--functions 'F G …' …] [NAME ...]      (names: see MODULES; default all)
Prints, per module: mutants, killed, survived, timeout, those no test reached, and those not checked (outside
the --functions groups, or left when the run was stopped).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build" / "mutation"
PACKAGE = "server"  # the folder holding the package `taskdsl`

#: name -> (the module's file under server/, the test files that exercise it, and pytest options)
MODULES: dict[str, tuple[str, list[str]]] = {
    "masking": ("taskdsl/support/redaction.py",
                ["tests/security/test_masking.py", "tests/security/test_mutants_masking.py",
                 "tests/security/test_masking_invisible.py::test_each_invisible_interleaving_is_masked_in_process"]),
    "reading": ("taskdsl/support/reading.py",
                ["tests/security/test_reading.py", "tests/security/test_special_files.py",
                 "tests/security/test_mutants_reading.py"]),
    "files": ("taskdsl/support/files.py",
              ["tests/security/test_writing.py", "tests/security/test_server_writes.py",
               "tests/security/test_mutants_files.py", "tests/security/test_writing_project_files.py"]),
    "confine": ("taskdsl/project/confine.py",
                ["tests/security/test_reading.py", "tests/security/test_trust.py",
                 "tests/security/test_mutants_reading.py"]),
    "consent": ("taskdsl/evaluator/consent.py",
                ["tests/test_consent.py", "tests/security/test_trust.py", "tests/security/test_mutants_consent.py",
                 "tests/test_memory.py::test_the_plan_shows_what_the_memory_may_read_and_pins_the_index",
                 # these two compare the CLI's printed plan (a separate process, 8 s) with the same text made
                 # here: they kill nothing the others do not, and would take 600 mutants × 8 s
                 "--deselect", "tests/test_consent.py::test_run_plan_prints_the_plan_and_runs_nothing",
                 "--deselect", "tests/test_consent.py::test_run_plan_names_the_inputs_still_missing"]),
    "cost": ("taskdsl/evaluator/cost.py",
             ["tests/test_security_limits.py", "tests/security/test_mutants_cost.py"]),
    "remote": ("taskdsl/lsp/remote.py",
               ["tests/test_security_server.py", "tests/security/test_mutants_remote.py"]),
    # the shell grammar's decisions in this process (test_mutants_shell.py re-runs the CLI tests' refusals with
    # the checker alone); the CLI tests themselves start processes and runs (about 2 minutes for one mutant)
    "shell": ("taskdsl/language/shell.py",
              ["tests/security/test_mutants_shell.py",
               "tests/test_security_shell.py::test_contexts_without_a_safe_form",
               "tests/test_security_shell.py::test_the_rendered_command_is_what_runs",
               "tests/test_security_shell.py::test_the_planned_command_shows_which_placeholder_each_variable_holds",
               "tests/test_security_shell.py::test_no_quick_fix_closes_the_quotes",
               "tests/security/test_shell_review.py::test_a_security_rule_that_raises_fails_closed"]),
}
#: modules whose tests leave processes behind (the server's workers): mutmut forks each mutant from a
#: process of its own instead of its main one, which would otherwise reap those processes as mutants
FORKSERVER = {"remote"}
#: what the tests read beside tests/ (copied into the mutants' folder)
ALSO = ["docs", "examples", "schemas", "README.md"]
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", 37: "killed", None: "not checked"}


def prepare(name: str) -> Path:
    """build/mutation/NAME: src -> the package folder, tests and ALSO linked, a pyproject.toml with
    this module's [tool.mutmut] (the repository's pytest settings kept)."""
    source, tests = MODULES[name]
    folder = BUILD / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "src").symlink_to(REPO / PACKAGE)
    for part in ["tests", *ALSO]:
        (folder / part).symlink_to(REPO / part)
    selection = [t for t in tests if t.startswith("-") or "::" in t or (REPO / t).exists()]
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    pytest_options = project["tool"]["pytest"]["ini_options"]
    lines = ["[tool.pytest.ini_options]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in pytest_options.items() if key != "testpaths"]
    lines += ["", "[tool.mutmut]",
              'source_paths = ["src"]',
              f"only_mutate = [{json.dumps('src/' + source)}]",
              f"also_copy = {json.dumps(ALSO)}",
              f"pytest_add_cli_args_test_selection = {json.dumps(selection)}",
              'pytest_add_cli_args = ["-p", "mutation_fresh", "-p", "no:cacheprovider", "-q", "-x", "--timeout", "120"]',
              "timeout_multiplier = 3.0",  # a mutant may take 3 times its tests' own time, plus …
              "timeout_constant = 5.0",  # … 5 seconds; past that it is a timeout (a hang the tests caught)
              "use_git_change_detection = false",
              f'process_isolation = "{"forkserver" if name in FORKSERVER else "fork"}"',
              "track_dependencies = false",
              ""]
    (folder / "pyproject.toml").write_text("\n".join(lines), "utf-8")
    (folder / "site").mkdir()
    (folder / "site" / "mutation_fresh.py").write_text(FRESH, "utf-8")
    (folder / "site" / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(mutants=str(folder / "mutants" / "src")), "utf-8")
    return folder


#: a pytest plugin: each mutant's tests start with taskdsl's caches empty (mutmut forks every mutant's
#: run from a process that has run the tests once, so a functools cache would hand the mutant the
#: original function's answers)
FRESH = """import sys


def pytest_sessionstart(session):
    for name, module in list(sys.modules.items()):
        if name.startswith("taskdsl"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
"""

#: imported first by every Python process (through PYTHONPATH): a process a test starts imports the
#: mutated copy; while mutmut maps tests to functions ("stats") it runs the original code instead
#: (mutmut records calls in its own process only)
SITECUSTOMIZE = """import os, sys
if "MUTANT_UNDER_TEST" in os.environ:
    sys.path.insert(0, {mutants!r})
    if os.environ["MUTANT_UNDER_TEST"] == "stats":
        del os.environ["MUTANT_UNDER_TEST"]
"""


def patterns(name: str, group: str) -> list[str]:
    """mutmut's names for the mutants of the functions (or Class.method) named in group."""
    module = MODULES[name][0][:-3].replace("/", ".")
    found = []
    for function in group.replace(",", " ").split():
        mangled = "x" + "\u01c1".join(["", *function.split(".")]) if "." in function else "x_" + function
        found.append(f"{module}.{mangled}__mutmut_*")
    return found


def run(name: str, jobs: int, groups: list[str] | None = None) -> Counter:
    """groups: run only the mutants of these functions, one group after another in this order (the others stay
    "not checked"); None: every mutant."""
    folder = prepare(name)
    env = dict(os.environ)
    # every process a test starts (the CLI in a subprocess, the server) imports the mutated copy too
    env.pop("MUTANT_UNDER_TEST", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder / "site"), env.get("PYTHONPATH")]))
    env.pop("CI", None)
    mutmut = [sys.executable, "-m", "mutmut"]
    log = folder / "mutmut.log"
    with open(log, "w") as out:
        for chosen in ([[]] if not groups else [patterns(name, group) for group in groups]):
            done = subprocess.run([*mutmut, "run", "--max-children", str(jobs), *chosen], cwd=folder, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    meta = folder / "mutants" / "src" / (MODULES[name][0] + ".meta")
    if not meta.exists():
        sys.exit(f"mutmut made no results for {name} (exit {done.returncode}); see {log}")
    codes = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
    if "could not find any test case for any mutant" in log.read_text("utf-8", "replace"):
        codes = dict.fromkeys(codes, 33)  # no selected test reached any function of the module
    counts = Counter(STATUS.get(code, "suspicious") for code in codes.values())
    counts["mutants"] = len(codes)
    listing = [f"{STATUS.get(code, 'suspicious')}\t{key}" for key, code in sorted(codes.items())]
    (folder / "results.tsv").write_text("\n".join(listing) + "\n", "utf-8")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"guard modules to mutate: {', '.join(MODULES)} (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--functions", action="append", metavar="'NAME NAME…'",
                        help="mutate only these functions (Class.method for a method); repeat to run groups one "
                             "after another in that order (one module only); the others are counted as not checked")
    args = parser.parse_args()
    names = args.names or list(MODULES)
    unknown = [name for name in names if name not in MODULES]
    if unknown:
        parser.error(f"no guard module named {', '.join(unknown)}: choose from {', '.join(MODULES)}")
    if args.functions and len(names) != 1:
        parser.error("--functions needs exactly one module")
    print(f"{'module':<10} {'mutants':>8} {'killed':>7} {'survived':>9} {'timeout':>8} {'no tests':>9} "
          f"{'not checked':>12}")
    failed = False
    for name in names:
        counts = run(name, args.jobs, args.functions)
        print(f"{name:<10} {counts['mutants']:>8} {counts['killed']:>7} {counts['survived']:>9} "
              f"{counts['timeout']:>8} {counts['no tests']:>9} {counts['not checked']:>12}", flush=True)
        survivors = [line.split("\t")[1] for line in (BUILD / name / "results.tsv").read_text().splitlines()
                     if line.startswith("survived")]
        for key in survivors:
            print(f"    survived: {key}")
        failed |= bool(counts["survived"] or counts["no tests"] or counts["suspicious"] or counts["not checked"])
    print(f"(per mutant: `cd build/mutation/NAME && {Path(sys.executable).name} -m mutmut show KEY`)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
