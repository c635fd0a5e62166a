"""The package shows its layers (docs/architecture.md): every module lives in one layer's package,
and no import — at the top of a module or inside a function, or named in a string for a lazy
import — runs from a lower layer to a higher one, or between two layers of one rank."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "taskdsl"

RANKS = {
    "support": 0, "language": 1, "project": 2, "meaning": 3, "library": 4, "rules": 5,
    "evaluator": 6, "task_system": 7, "authoring": 7, "features": 8, "lsp": 9, "cli": 10,
}
TOP_LEVEL = {"taskdsl", "taskdsl.__main__"}  # the package itself (its version) and `python -m taskdsl`


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        name = ".".join(("taskdsl",) + path.relative_to(package).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) for every taskdsl module `name` imports, lazily or not, or names in a string."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("taskdsl")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("taskdsl"):
                continue
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.append((node.lineno, candidate if candidate in known else module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            found.append((node.lineno, node.value))  # OnFirstUse("taskdsl.x.y"), importlib.import_module
    return found


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANKS else None


def violations(package: Path = PACKAGE) -> tuple[list[str], list[str]]:
    """(modules outside every layer, imports that run up or sideways)."""
    known = modules(package)
    outside = [name for name in known if name not in TOP_LEVEL and layer(name) is None]
    wrong = []
    for name, path in known.items():
        own = layer(name)
        if own is None:
            continue
        for line, target in imports(name, path, set(known)):
            other = layer(target)
            if target == "taskdsl" or other == own:
                continue
            if other is None or RANKS[other] >= RANKS[own]:
                direction = "up" if other is None or RANKS[other] > RANKS[own] else "sideways"
                wrong.append(f"{path.relative_to(package.parent)}:{line}: {name} ({own}) imports {target} "
                             f"({other or 'outside the layers'}): {direction}")
    return outside, wrong


def test_every_module_lives_in_a_layer():
    outside, _ = violations()
    assert outside == []


def test_no_import_runs_up_or_sideways():
    _, wrong = violations()
    assert wrong == []


def test_each_layer_says_what_it_answers_and_may_import():
    for package in RANKS:
        doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import" in doc, package


@pytest.mark.parametrize("source, expected", [
    ("from taskdsl.cli.main import main\n", "up"),
    ("def later():\n    from taskdsl.lsp import server\n", "up"),
    ("from taskdsl.evaluator import plan\nX = 'taskdsl.lsp.server'\n", "up"),
    ("from taskdsl.task_system import ask\n", "sideways"),
    ("from ..evaluator import plan\n", None),
])
def test_the_check_sees_a_wrong_import(tmp_path, source, expected):
    """A copy of the package with one planted import in authoring/: the check names it."""
    import shutil

    copy = tmp_path / "taskdsl"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.xml"))
    (copy / "authoring" / "planted.py").write_text(source, encoding="utf-8")
    _, wrong = violations(copy)
    planted = [w for w in wrong if "planted" in w]
    if expected is None:
        assert planted == []
    else:
        assert len(planted) == 1 and planted[0].endswith(expected), wrong


def test_a_module_outside_the_layers_is_named(tmp_path):
    import shutil

    copy = tmp_path / "taskdsl"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.xml"))
    (copy / "stray.py").write_text("X = 1\n", encoding="utf-8")
    outside, _ = violations(copy)
    assert outside == ["taskdsl.stray"]


def test_the_architecture_page_shows_the_tree_as_it_is():
    """docs/architecture.md's picture names every module of every layer, and no module that is gone."""
    import re

    page = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    picture = page.split("## The layers", 1)[1].split("```", 2)[1]
    shown: dict[str, set[str]] = {}
    current = None
    for line in picture.splitlines():
        heading = re.match(r"[├└]── (\w+)/", line)
        if heading:
            current = heading.group(1)
            shown[current] = set()
        elif current and (line.startswith("│     ") or line.startswith("      ")) and line[6:7] != " ":
            shown[current] |= {re.sub(r"\(.*\)", "", word) for word in line.split()[1 if line.startswith("│") else 0:]}
    actual = {package: {p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__"} for package in RANKS}
    assert shown == actual
    table = page.split("## Modules", 1)[1].split("\n## ", 1)[0]
    for package, names in actual.items():
        for name in names:
            named = (f"{package}/{name}.py", f"`{name}.py`", f"`{name}`", f"{name}.py`")
            assert f"`{package}/" in table and any(form in table for form in named), (package, name)
