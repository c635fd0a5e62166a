"""The server as a plain process over stdio (no pytest-lsp): what it writes to stderr."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from lsp_client import LspClient  # noqa: E402


def test_a_request_about_a_file_that_is_gone_answers_empty_without_a_traceback(tmp_path):
    """Clients ask about documents they closed, even after the file was deleted: that is not a fault."""
    client = LspClient(stderr=subprocess.PIPE)
    try:
        client.initialize(tmp_path)
        gone = (tmp_path / "deleted.task.xml").as_uri()
        position = {"line": 0, "character": 1}
        assert client.request("textDocument/hover", {"textDocument": {"uri": gone}, "position": position}) is None
        assert client.request("textDocument/documentSymbol", {"textDocument": {"uri": gone}}) == []
    finally:
        client.close()
    assert "Traceback" not in client.proc.stderr.read().decode()
