"""Everything taskdsl writes goes through its one writer, taskdsl.support.files: no other module opens
a file for writing, writes one whole or makes a folder. An AST scan of the package, so a new writer
elsewhere (which would follow links, truncate in place or create folders through a link) fails here
until it uses the writer. Reviewed exceptions are listed with their reason."""

import ast
from pathlib import Path

from paths import REPO
from scan_calls import WRITE_FLAGS, calls, mode_of, names, writes_mode

PACKAGE = REPO / "server" / "taskdsl"
WRITER = PACKAGE / "support" / "files.py"
#: "path:what" → why it is not a write the one writer must make
REVIEWED: dict[str, str] = {
    "authoring/testcases.py:tempfile.mkdtemp": "a test's scratch folder: a fresh name, 0700, made by mkdtemp itself",
    "lsp/debug.py:tempfile.mkdtemp": "a debugged test's scratch folder: as a test's",
}


def _mode_writes(call: ast.Call, position: int) -> bool:
    mode = mode_of(call, position)
    return mode is not None and writes_mode(mode)


def writes(tree: ast.AST):
    """(line, what) of every write a module makes itself."""
    for node, name, owner, owner_name in calls(tree):
        if name == "open" and owner_name == "os":
            flags = node.args[1] if len(node.args) > 1 else None
            if flags is not None and names(flags) & WRITE_FLAGS:
                yield node.lineno, "os.open with write flags"
        elif name in ("open", "fdopen") and (owner is None or owner_name in ("io", "codecs", "os", "builtins")):
            if _mode_writes(node, 1):
                yield node.lineno, f"{name}(…, write mode)"
        elif name == "open" and owner is not None:  # Path.open(mode)
            if _mode_writes(node, 0):
                yield node.lineno, ".open(write mode)"
        elif name in ("write_text", "write_bytes") and owner is not None and owner_name != "files":
            yield node.lineno, f".{name}"
        elif name in ("mkdir", "makedirs") and owner_name != "files":
            yield node.lineno, name
        elif name in ("copy", "copy2", "copyfile", "copytree", "move") and owner_name == "shutil":
            yield node.lineno, f"shutil.{name}"
        elif name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile") and owner_name == "tempfile":
            yield node.lineno, f"tempfile.{name}"
        elif name == "touch" and owner is not None:
            yield node.lineno, ".touch"


def test_no_module_but_the_writer_writes_a_file():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == WRITER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, what in writes(tree):
            key = f"{path.relative_to(PACKAGE)}:{what}"
            if key not in REVIEWED:
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {what}")
    assert found == [], "write through taskdsl.support.files instead:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_write():
    # the scan itself can fail: each form it must catch, caught
    sample = ast.parse(
        'open(p, "w")\nopen(p, mode="ab")\nio.open(p, "x")\nos.fdopen(fd, "r+")\nPath(p).open("w")\n'
        'p.write_text("x")\np.write_bytes(b"x")\nos.open(p, os.O_WRONLY | os.O_CREAT)\nos.makedirs(p)\n'
        'Path(p).mkdir()\nshutil.copy(a, b)\ntempfile.mkstemp()\nPath(p).touch()\n'
        'open(p)\nopen(p, "rb")\nos.open(p, os.O_RDONLY)\nfiles.write_text(p, "x")\n')
    assert sorted(line for line, _ in writes(sample)) == list(range(1, 14))
