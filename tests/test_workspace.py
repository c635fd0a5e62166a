"""The project layer: the project root, one discovery and one reader for every surface, and
`taskdsl check` and `taskdsl run` agreeing on what a reference resolves to."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from taskdsl.project import workspace
from taskdsl.cli.main import main
from taskdsl.project.settings import Settings

MAIN = """<task type="sequential" name="main">
  <description>run the helper</description>
  <steps>
    <call template="helper"><arg>hello</arg></call>
  </steps>
</task>
"""
HELPER = """<template name="helper" params="text">
  <task type="script"><command>echo helper says {{text}}</command></task>
</template>
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    write(root / "taskdsl.toml", "")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_LIBRARY_PATH", raising=False)
    return root


# --------------------------------------------------------------------------- the project root


def test_project_root_is_the_nearest_folder_with_a_marker(tmp_path):
    write(tmp_path / "a" / "pyproject.toml", "")
    deep = write(tmp_path / "a" / "b" / "c" / "t.task.xml", "<task/>")
    assert workspace.project_root(deep) == str(tmp_path / "a")
    (tmp_path / "a" / "b" / ".git").mkdir()
    assert workspace.project_root(deep) == str(tmp_path / "a" / "b")
    write(tmp_path / "a" / "b" / "c" / "taskdsl.toml", "")
    assert workspace.project_root(deep) == str(tmp_path / "a" / "b" / "c")
    assert workspace.project_root(tmp_path / "a" / "b" / "c") == str(tmp_path / "a" / "b" / "c")


def test_project_root_without_a_marker_is_the_files_folder(tmp_path):
    lone = write(tmp_path / "x" / "t.task.xml", "<task/>")
    if workspace.project_root(tmp_path) != str(tmp_path):
        pytest.skip("the temporary folder lies inside a project")
    assert workspace.project_root(lone) == str(tmp_path / "x")


# --------------------------------------------------------------------------- discovery


def relative(root: Path, paths) -> list[str]:
    return sorted(os.path.relpath(p, root).replace(os.sep, "/") for p in paths)


def test_discovery_skips_environments_dependencies_ignored_and_excluded(project):
    for folder in ("", "sub/", "venv/", ".venv/", "node_modules/x/", "__pycache__/", ".git/", "build/",
                   "drafts/", "sub/generated/"):
        write(project / folder / "t.task.xml", "<task/>")
    write(project / "notes.xml", "<task/>")
    write(project / ".gitignore", "build/\n")
    write(project / "sub" / ".gitignore", "generated/\n")
    found = workspace.discover([project], Settings(), exclude=["drafts/"])
    assert relative(project, found.project_files) == ["sub/t.task.xml", "t.task.xml"]
    assert found.library_files == []
    # the `exclude` of the settings counts too (the project configuration reaches discovery there)
    settings = type("WithExclude", (), {"files": ("**/*.task.xml",), "library_paths": (), "exclude": ("sub/", "drafts")})()
    assert relative(project, workspace.discover([project], settings).project_files) == ["t.task.xml"]


def test_library_paths_are_discovered_as_library_files(project, tmp_path):
    write(tmp_path / "shared" / "lib.task.xml", HELPER)
    write(tmp_path / "shared" / "venv" / "lib.task.xml", HELPER)
    write(project / "main.task.xml", MAIN)
    found = workspace.discover([project], Settings(library_paths=("../shared",)))
    assert relative(project, found.project_files) == ["main.task.xml"]
    assert relative(tmp_path, found.library_files) == ["shared/lib.task.xml"]
    assert workspace.belongs(str(tmp_path / "shared" / "lib.task.xml"), [str(project)],
                             Settings(library_paths=("../shared",)))
    assert not workspace.belongs(str(tmp_path / "shared" / "venv" / "lib.task.xml"), [str(project)],
                                 Settings(library_paths=("../shared",)))


# --------------------------------------------------------------------------- reading


def test_the_reader_drops_a_bom_and_names_the_first_bad_byte(tmp_path):
    path = write(tmp_path / "t.task.xml", b"\xef\xbb\xbf<task>\xc3\xa9\xff</task>")
    source = workspace.read_source(str(path))
    assert source.bom and source.text == "<task>é\ufffd</task>"
    assert source.problem == (7, "not valid UTF-8 at byte 11 (0xff): templates are UTF-8")
    binary = workspace.read_source(str(write(tmp_path / "b.task.xml", b"<task>\x00")))
    assert binary.refused and binary.problem[1] == "binary file (a NUL byte at byte 6): this is not a template"


# --------------------------------------------------------------------------- check and run agree


def test_a_template_in_a_venv_folder_is_outside_the_project_for_check_and_run_alike(project, capsys):
    main_path = write(project / "main.task.xml", MAIN)
    write(project / "venv" / "helper.task.xml", HELPER)
    code, out, _ = cli(capsys, "check", str(project))
    assert code == 1
    assert "main.task.xml:4:21: error TD501 'helper' is not a task or template in the library" in out
    code, out, err = cli(capsys, "run", str(main_path))
    assert code == 2 and out == ""
    assert "main.task.xml:4:21: error TD501 'helper' is not a task or template in the library" in err


def test_a_template_beside_in_the_project_resolves_for_check_and_run_alike(project, capsys):
    main_path = write(project / "flows" / "main.task.xml", MAIN)
    write(project / "lib" / "helper.task.xml", HELPER)
    assert cli(capsys, "check", str(main_path))[0] == 0
    code, out, _ = cli(capsys, "run", str(main_path), "-q")
    assert (code, out) == (0, "helper says hello\n")


def test_check_of_a_file_gives_what_check_of_its_folder_gives_for_it(project, capsys):
    main_path = write(project / "main.task.xml", MAIN.replace("<arg>hello</arg>", ""))
    write(project / "lib" / "helper.task.xml", HELPER)
    write(project / "other.task.xml", '<task name="main"><description>again</description></task>\n')
    _, by_folder, _ = cli(capsys, "check", str(project))
    _, by_file, _ = cli(capsys, "check", str(main_path))
    mine = [line for line in by_folder.splitlines() if line.startswith(str(main_path) + ":")]
    assert by_file.splitlines() == mine
    codes = sorted(line.split()[2] for line in mine)
    assert codes == ["TD502", "TD503"]  # the duplicate in other.task.xml, helper's missing param


def test_library_paths_from_the_environment_reach_check_and_run(project, tmp_path, capsys, monkeypatch):
    main_path = write(project / "main.task.xml", MAIN)
    write(tmp_path / "shared" / "helper.task.xml", HELPER)
    assert cli(capsys, "check", str(main_path))[0] == 1
    monkeypatch.setenv("TASKDSL_LIBRARY_PATH", str(tmp_path / "shared"))
    assert cli(capsys, "check", str(main_path))[0] == 0
    assert cli(capsys, "run", str(main_path), "-q")[:2] == (0, "helper says hello\n")


# --------------------------------------------------------------------------- one fixer


def test_check_fix_writes_what_the_fixer_computes(project, capsys):
    from taskdsl.rules.fixer import fix_text

    text = ('<task>\n  <description>x</description>\n  <context_management>\n'
            '    <inherit_context>true</inherit_context>\n    <accumulate_data>yes</accumulate_data>\n'
            '  </context_management>\n</task>\n')
    path = write(project / "legacy.task.xml", text)
    expected = fix_text(text, path=str(path))
    assert expected.text != text and expected.applied
    code, out, err = cli(capsys, "check", "--fix", str(path))
    assert path.read_text(encoding="utf-8") == expected.text
    fixed_lines = [line for line in out.splitlines() if ": fixed " in line]
    assert fixed_lines == [f"{path}:{a.line + 1}:{a.column + 1}: fixed {a.diagnostic.code} {a.fix.title}"
                           for a in expected.applied]


def test_the_cli_has_no_fixer_of_its_own():
    import taskdsl.cli.main as cli_module

    source = Path(cli_module.__file__).read_text(encoding="utf-8")
    assert "apply_edits" not in source and "_fix_file" not in source


# --------------------------------------------------------------------------- no import cycles


def _imports(package: Path) -> dict[str, set[str]]:
    """Every taskdsl module and the taskdsl modules it imports (at any level: lazy ones count)."""
    modules = {}
    for path in package.rglob("*.py"):
        name = ".".join(("taskdsl",) + path.relative_to(package).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in modules.items():
        package_name = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package_name.split(".")[: len(package_name.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                             for alias in node.names)
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def test_no_module_imports_itself_back_through_others():
    import taskdsl

    graph = _imports(Path(taskdsl.__file__).parent)
    cycles = []
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(" → ".join(trail[trail.index(target):] + [name, target]))
            elif target not in state:
                visit(target, trail + [name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert cycles == []
    # the library (the package and each of its modules) imports no checker: the checks read it
    library_modules = {name for name in graph if name == "taskdsl.library" or name.startswith("taskdsl.library.")}
    assert {"taskdsl.library", "taskdsl.library.index"} <= library_modules
    assert {name for name in library_modules if "taskdsl.rules.checker" in graph[name]} == set()


def test_the_fix_all_code_action_is_the_fixer_of_check_fix(tmp_path):
    from lsprotocol import types

    from taskdsl.language.document import parse
    from taskdsl.features.actions import FIX_ALL_KIND, code_actions
    from taskdsl.features.util import Positions
    from taskdsl.rules.fixer import fix_text

    text = ('<task type="atomc">\n  <description>x</description>\n  <model>gpt-4o-mni</model>\n  <context_management>\n'
            '    <inherit_context>true</inherit_context>\n    <accumulate_data>yes</accumulate_data>\n'
            '  </context_management>\n</task>\n')
    # safe fixes only: the enumeration typo is fixed, the guessed model (an unsafe fix) is not
    assert '<task type="atomic">' in fix_text(text).text and "gpt-4o-mni" in fix_text(text).text
    doc = parse(text)
    positions = Positions(doc)
    everywhere = types.Range(types.Position(0, 0), types.Position(0, 0))
    found = code_actions(doc, positions, "file:///w/t.task.xml", everywhere, [],
                         types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]))
    [action] = [a for a in found if a.kind == FIX_ALL_KIND]
    [edit] = action.edit.changes["file:///w/t.task.xml"]
    start, end = positions.offset(edit.range.start), positions.offset(edit.range.end)
    assert text[:start] + edit.new_text + text[end:] == fix_text(text).text
    # not offered when nothing asks for it (it checks the document again), nor on a clean text
    assert not [a for a in code_actions(doc, positions, "file:///w/t.task.xml", everywhere, [],
                                        types.CodeActionContext(diagnostics=[])) if a.kind == FIX_ALL_KIND]
    clean = parse(fix_text(text).text)
    assert not [a for a in code_actions(clean, Positions(clean), "file:///w/t.task.xml", everywhere, [],
                                        types.CodeActionContext(diagnostics=[], only=["source"]))
                if a.kind == FIX_ALL_KIND]


def test_the_index_takes_a_created_file_only_where_discovery_would_find_it(project):
    from taskdsl.library import Library

    write(project / ".gitignore", "generated/\n")
    library = Library.from_paths([project])
    assert library.matches(str(write(project / "lib" / "new.task.xml", HELPER)))
    for skipped in ("venv/new.task.xml", "generated/new.task.xml", "node_modules/a/new.task.xml", "new.xml"):
        assert not library.matches(str(write(project / skipped, HELPER))), skipped
