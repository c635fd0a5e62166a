"""pytest-lsp fixtures: the server over stdio, driven with the recorded capabilities of VS Code,
Neovim and Emacs (one server per test module and client).

A test module sets ``FILES`` ({relative path: text}, written into a fresh workspace folder) and,
optionally, ``SETTINGS`` (the ``taskdsl`` configuration section the client answers with) and
``INITIALIZATION_OPTIONS`` (sent with initialize). The
``client`` fixture is parametrized over the three clients; ``ws`` is the workspace folder.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CLIENTS = ["visual_studio_code", "neovim", "emacs"]
SERVER = [sys.executable, "-m", "taskdsl", "serve"]


def pull_client(client: LanguageClient) -> bool:
    caps = client.capabilities
    return bool(caps and caps.text_document and caps.text_document.diagnostic)


def pytest_collection_modifyitems(config, items) -> None:
    """The client fixture lives in its module's event loop: a test that awaits it from a loop of
    its own never sees an answer and hangs. Say so at collection instead."""
    here = Path(__file__).parent
    for item in items:
        if "client" not in getattr(item, "fixturenames", ()) or here not in Path(item.path).parents:
            continue
        marker = item.get_closest_marker("asyncio")
        if marker is None or marker.kwargs.get("loop_scope") not in ("module", "session"):
            raise pytest.UsageError(
                f"{item.nodeid}: a server test module needs "
                'pytestmark = pytest.mark.asyncio(loop_scope="module") (the client lives in the module\'s loop)')


@pytest.fixture(scope="module")
def ws(request, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ws")
    for relative, text in getattr(request.module, "FILES", {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=CLIENTS)
async def client(lsp_client: LanguageClient, request, ws: Path):
    name = request.param
    lsp_client.set_configuration(dict(getattr(request.module, "SETTINGS", {})), section="taskdsl")
    lsp_client.registrations = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    # record every publish with its version (pytest-lsp keeps only the latest diagnostics)
    lsp_client.published = []  # type: ignore[attr-defined]
    features = lsp_client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams):
        lsp_client.published.append(params)  # type: ignore[attr-defined]
        return keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        lsp_client.applied_edits = getattr(lsp_client, "applied_edits", []) + [params.edit]  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=client_capabilities(name),
        root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options=getattr(request.module, "INITIALIZATION_OPTIONS", None),
    ))
    # the library is built after `initialized`; every recorded client supports work-done progress
    await asyncio.wait_for(indexed(lsp_client), 120)  # a hang guard: the index is ready when its progress ends
    yield
    await lsp_client.shutdown_session()


async def indexed(client: LanguageClient) -> None:
    while not any(isinstance(report, types.WorkDoneProgressEnd)
                  for token, reports in client.progress_reports.items() if str(token).startswith("taskdsl-index")
                  for report in reports):
        await asyncio.sleep(0.02)


class Docs:
    """Open documents and wait for their diagnostics, push or pull alike."""

    def __init__(self, client: LanguageClient, ws: Path):
        self.client, self.ws = client, ws

    def uri(self, relative: str) -> str:
        return (self.ws / relative).as_uri()

    async def open(self, relative: str, text: str | None = None, version: int = 1) -> str:
        uri = self.uri(relative)
        if text is None:
            text = (self.ws / relative).read_text(encoding="utf-8")
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="taskxml", version=version, text=text)))
        return uri

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics of the document's current version (pulled, or the next push)."""
        if pull_client(self.client):
            report = await self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
            return list(report.items)
        while uri not in self.client.diagnostics:
            await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return list(self.client.diagnostics.pop(uri))


@pytest.fixture
def asked(client: LanguageClient) -> LanguageClient:
    """The client answers the server's questions (the run's consent) from ``client.answers``, in order: a
    button's title, or a callable that may change the workspace first and returns the title ("Cancel" when
    the list is empty); ``client.questions`` records every question asked, fresh for each test."""
    if not hasattr(client, "questions"):
        client.questions = []

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams):
            client.questions.append(params)
            answer = client.answers.pop(0) if client.answers else "Cancel"
            answer = answer() if callable(answer) else answer
            return next((a for a in params.actions or [] if a.title == answer), None)

    client.questions.clear()
    client.answers = []
    return client


@pytest.fixture
def docs(client: LanguageClient, ws: Path) -> Docs:
    client.diagnostics.clear()
    return Docs(client, ws)


def encoding(client: LanguageClient) -> str:
    return client.init_result.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]


def units(prefix: str, enc: str) -> int:
    """Length of a line prefix in the negotiated encoding's code units."""
    if enc == "utf-8":
        return len(prefix.encode("utf-8"))
    if enc == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def pos(text: str, offset: int, enc: str = "utf-16") -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line, units(text[start:offset], enc))


def text_at(text: str, enc: str = "utf-16", marker: str = "|") -> tuple[str, types.Position]:
    """Remove the marker; the text and the marker's position in the encoding."""
    offset = text.index(marker)
    text = text[:offset] + text[offset + len(marker):]
    return text, pos(text, offset, enc)
