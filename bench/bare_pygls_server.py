"""The transport alone: a pygls server that answers didOpen/didChange with empty diagnostics.

bench_server.py measures open → diagnostics against it to show what the stdio round trip and
pygls's own message handling cost before any checking happens."""

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0", text_document_sync_kind=types.TextDocumentSyncKind.Incremental)


def _publish(ls: LanguageServer, uri: str, version: int) -> None:
    ls.workspace.get_text_document(uri).source  # the document as the server would read it
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=version))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


if __name__ == "__main__":
    server.start_io()
