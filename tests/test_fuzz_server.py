"""Property-based, through the real server over stdio: mutated templates and random sequences of
incremental edits, with completion, hover, documentSymbol and formatting requests at random
positions in between.

Checked for every example: every request is answered (no error response, no timeout), no
exception escapes a handler (nothing logged on the server's stderr, the process is alive), and
the diagnostics published for the final version equal a fresh ``check_text`` of the same final
text (codes and ranges), with the same library the server has (the workspace is empty; the
document itself is the only indexed file).

Modest example count: the whole module runs in well under a minute.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from lsp_client import LspClient  # noqa: E402

from taskdsl.rules.checker import check_text  # noqa: E402
from taskdsl.library import Library  # noqa: E402
from taskdsl.project.settings import Settings  # noqa: E402

from mutations import mutated_templates  # noqa: E402
from paths import CORPUS  # noqa: E402

SEEDS = sorted((ROOT / "examples").rglob("*.task.xml")) + sorted(CORPUS.glob("*.xml"))[:30]
# '\n' is the only line break the positions below count ('\r' is normalised away); U+2028 and
# U+0085 are fragments: LSP does not break lines there (pygls did, until the server's own
# LspTextDocument), so an edit below one must still land where the client meant it.
TEXTS = [path.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\r", "\n") for path in SEEDS]
FRAGMENTS = ["<", "</", "<task>", "</task>", '="', '"', "&", "&foo;", "&amp;", "<![CDATA[", "]]>", "<!--", "-->",
             "{{", "}}", "{{x", "{{input}}", "<steps>", "</steps>", '<inputs><input name="a">', "<description>",
             '<cond><case test="output.">', '<task type="sequential">', ' name="n"', ' ref="x"', "\n", "  ",
             "\x00", "\ufeff", "é", "\U0001F600", "<!DOCTYPE x>", "<?xml version='1.0'?>", ">", "/>", "\u2028", "\x85"]

pytestmark = pytest.mark.skipif(not TEXTS, reason="no seed templates")


def utf16_position(text: str, offset: int) -> dict:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": len(text[start:offset].encode("utf-16-le")) // 2}


def lsp_range(text: str, start: int, end: int) -> dict:
    return {"start": utf16_position(text, start), "end": utf16_position(text, end)}


def mutated():
    return mutated_templates(TEXTS, FRAGMENTS, (0, 3))


# an action: ("edit", start fraction, length, inserted text) or ("request", method, offset fraction)
EDIT = st.tuples(st.just("edit"), st.floats(0, 1), st.integers(0, 12),
                 st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet="ab <>/=\"'{}&;\n\té", max_size=6)))
REQUEST = st.tuples(st.just("request"),
                    st.sampled_from(["textDocument/completion", "textDocument/hover", "textDocument/documentSymbol",
                                     "textDocument/formatting"]),
                    st.floats(0, 1.05))  # a little past the end: positions beyond the text are answered too


class Server:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="taskdsl-fuzz-"))
        self.stderr_path = self.folder.parent / (self.folder.name + ".stderr")
        self.stderr = open(self.stderr_path, "w+b")
        self.client = LspClient(settings={"debounce": 0}, stderr=self.stderr, cwd=str(self.folder))
        self.client.initialize(self.folder)
        self.counter = itertools.count()
        self.seen = 0
        self.library = Library.from_paths([str(self.folder)], settings=Settings())

    def new_errors(self) -> str:
        """What the server wrote on stderr since the last call."""
        self.stderr.flush()
        self.stderr.seek(self.seen)
        data = self.stderr.read()
        self.seen += len(data)
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        self.client.close()
        self.stderr.close()


@pytest.fixture(scope="module")
def server():
    running = Server()
    yield running
    running.close()


def expected_diagnostics(server: Server, path: str, text: str) -> list:
    server.library.update_file(path, text)
    try:
        result = check_text(text, path=path, library=server.library, settings=Settings())
    finally:
        server.library.remove_file(path)
    return sorted((d.code, _key(lsp_range(text, d.span.start, d.span.end))) for d in result.diagnostics)


def _key(r: dict) -> tuple:
    return (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "80")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(initial=mutated(), actions=st.lists(st.one_of(EDIT, REQUEST), min_size=1, max_size=10))
def test_server_answers_everything_and_agrees_with_a_fresh_check(server: Server, initial: str, actions: list):
    client = server.client
    path = str(server.folder / f"fuzz{next(server.counter)}.task.xml")
    uri = Path(path).as_uri()
    text, version = initial, 1
    client.open(uri, text, version)
    try:
        for action in actions:
            if action[0] == "edit":
                _, where, length, inserted = action
                start = min(len(text), int(where * len(text)))
                end = min(len(text), start + length)
                change = {"range": lsp_range(text, start, end), "text": inserted}
                text = text[:start] + inserted + text[end:]
                version += 1
                client.notify("textDocument/didChange",
                              {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
            else:
                _, method, where = action
                params = {"textDocument": {"uri": uri}}
                if method == "textDocument/formatting":
                    params["options"] = {"tabSize": 2, "insertSpaces": True}
                elif method != "textDocument/documentSymbol":
                    offset = int(where * len(text))
                    params["position"] = (utf16_position(text, offset) if offset <= len(text)
                                          else {"line": text.count("\n") + 3, "character": 7})
                client.request(method, params, timeout=30)  # raises on an error answer or no answer

        published = client.wait_diagnostics(uri, version, timeout=30)
        assert published.get("version") == version
        got = sorted((d["code"], _key(d["range"])) for d in published["diagnostics"])
        assert got == expected_diagnostics(server, path, text)
        assert client.proc.poll() is None, "the server exited"
        logged = server.new_errors()
        assert "Traceback" not in logged and "failed" not in logged, logged
    finally:
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
