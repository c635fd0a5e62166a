"""A feature that raises is logged once and answered empty; the server keeps answering.
Settings changed in the client apply live (re-check of open documents)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

# the real server, with hover made to raise (as a bug in a feature would)
BROKEN_HOVER = (
    "import taskdsl.features.hover as hover\n"
    "def boom(*args, **kwargs):\n"
    "    raise RuntimeError('hover exploded')\n"
    "hover.describe_at = boom\n"
    "from taskdsl.lsp.server import main\n"
    "main()\n"
)
TEXT = "<task>\n  <description>Use {{nothing}}</description>\n</task>\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-c", BROKEN_HOVER]),
                    scope="module", params=["visual_studio_code", "emacs"])
async def broken(lsp_client: LanguageClient, request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("broken")
    lsp_client.set_configuration({}, section="taskdsl")

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param), root_uri=folder.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="broken")]))
    lsp_client.folder = folder  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_exception_in_a_feature_answers_empty_and_server_stays_up(broken: LanguageClient):
    uri = (broken.folder / "a.task.xml").as_uri()  # type: ignore[attr-defined]
    broken.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="taskxml", version=1, text=TEXT)))
    for _ in range(2):
        assert await broken.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 2))) is None
    # the other features still answer
    symbols = await broken.text_document_document_symbol_async(types.DocumentSymbolParams(types.TextDocumentIdentifier(uri)))
    assert [s.name for s in symbols] == ["task"]
    # a warning for an undefined variable, then live settings: declare it a global
    await broken.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS) if uri not in broken.diagnostics else None
    assert [d.code for d in broken.diagnostics.pop(uri)] == ["TD402"]
    broken.set_configuration({"globals": ["nothing"]}, section="taskdsl")
    broken.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

    async def cleared() -> None:  # (a publish from the initial library build may come first)
        while list(broken.diagnostics.get(uri, [None])):
            await broken.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(cleared(), 20)

