"""Everything taskdsl reads from a file goes through its one reader, taskdsl.support.reading.read_bytes: opened
once, checked on what was opened (a regular file; inside the root when there is one), read up to a limit
whatever the file system says its size is. An AST scan of the package, so a new reader elsewhere (which
would hang on a FIFO, read /dev/zero without end or look a name up twice) fails here until it uses the
reader. Reviewed exceptions are listed with their reason. (A batch's rows were read around the reader:
a link to /dev/zero took 2 GB of memory, a FIFO hung the run.)"""

import ast

from paths import REPO
from scan_calls import WRITE_FLAGS, calls, mode_of, names, writes_mode

PACKAGE = REPO / "server" / "taskdsl"
READER = PACKAGE / "support" / "reading.py"
WRITER = PACKAGE / "support" / "files.py"  # opens what it writes (and its folders): test_one_writer.py
#: "path:what" → why it is not a read the one reader must make
REVIEWED: dict[str, str] = {
    "evaluator/script.py:open(…) for reading": "/proc/PID/environ of the run's own children (finding its process "
                                               "tree to stop it), a kernel file the reader refuses by design",
    "language/grammar_tables.py:.read_text": "the package's own grammar tables, installed with it",
    "language/models.py:.read_text": "the package's own copy of litellm's model table, installed with it",
    "language/schema.py:.read_text": "the package's own XSD, installed with it",
    "language/schema.py:etree.parse": "the package's own XSD, installed with it",
    "language/vocabulary.py:etree.parse": "the package's own XSD, installed with it",
    "rules/pages.py:.read_text": "the rule pages of the repository's docs/, read by the maintainers' generator",
    "lsp/debug.py:open(…) for reading": "the debug adapter's standard input (a pipe from the editor), not a file",
}


def _mode_reads(call: ast.Call, position: int) -> bool:
    mode = mode_of(call, position)
    return mode is None or not writes_mode(mode) or not isinstance(mode, ast.Constant)


def reads(tree: ast.AST):
    """(line, what) of every file a module opens for reading itself."""
    for node, name, owner, owner_name in calls(tree):
        if name == "open" and owner_name == "os":
            flags = node.args[1] if len(node.args) > 1 else None
            if flags is None or not names(flags) & WRITE_FLAGS:
                yield node.lineno, "os.open for reading"
        elif name == "open" and (owner is None or owner_name in ("io", "codecs", "builtins")):
            if _mode_reads(node, 1):
                yield node.lineno, "open(…) for reading"
        elif name == "open" and owner is not None and owner_name not in ("os", "webbrowser"):  # Path.open()
            if _mode_reads(node, 0):
                yield node.lineno, ".open() for reading"
        elif name in ("read_text", "read_bytes") and owner is not None and owner_name != "reading":
            yield node.lineno, f".{name}"
        elif name in ("parse", "iterparse") and owner_name == "etree":  # lxml opens a path it is given
            yield node.lineno, f"etree.{name}"


def test_no_module_but_the_reader_reads_a_file():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in (READER, WRITER):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, what in reads(tree):
            key = f"{path.relative_to(PACKAGE)}:{what}"
            if key not in REVIEWED:
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {what}")
    assert found == [], "read through taskdsl.support.reading.read_bytes instead:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_read():
    # the scan itself can fail: each form it must catch, caught
    sample = ast.parse(
        'open(p)\nopen(p, "rb")\nio.open(p, mode="r")\nPath(p).open()\np.read_text()\np.read_bytes()\n'
        'os.open(p, os.O_RDONLY)\nos.open(p, flags)\nopen(p, m)\n'
        'etree.parse(p)\n'
        'open(p, "w")\nos.open(p, os.O_WRONLY | os.O_CREAT)\nreading.read_bytes(p, 10)\nPath(p).open("a")\n')
    assert sorted(line for line, _ in reads(sample)) == list(range(1, 11))


def test_every_reviewed_read_is_still_there():
    # an exception nobody needs any more is a hole waiting for a new read
    present = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for _, what in reads(ast.parse(path.read_text(encoding="utf-8"))):
            present.add(f"{path.relative_to(PACKAGE)}:{what}")
    assert sorted(set(REVIEWED) - present) == []
