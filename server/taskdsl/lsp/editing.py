"""The editor features' handlers: completion, hover, definition, references, rename, document
and workspace symbols, folding ranges, document links, code actions, inlay hints and
formatting, linked editing, selection ranges and document highlights. Each is a thin wire from an LSP request to a pure function of ``taskdsl.features``
over the request's ``Analysis``; the feature modules are imported when first used (after
initialize is answered), ``actions`` alone at once (its code action kinds are registered)."""

from __future__ import annotations

from lsprotocol import types

from taskdsl.features import actions  # light; its code action kinds are registered below
from taskdsl.lsp.diagnostics import is_config_uri, to_lsp_diagnostic
from taskdsl.lsp.server import (JsonRpcRequestFailed, TaskdslServer, completion, formatting, guarded, hover,
                                inlay, navigation, server, symbols)
from taskdsl.lsp.state import Analysis
from taskdsl.support.lazy import OnFirstUse


@server.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=["<", "/", " ", '"', "{", "."]))
@guarded("completion", lambda: types.CompletionList(is_incomplete=False, items=[]))
def on_completion(ls: TaskdslServer, params: types.CompletionParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return completion.complete(analysis.document, offset, analysis.positions, client=ls.state.client,
                               library=ls.state.library, settings=ls.state.settings, path=analysis.path)


@server.feature(types.TEXT_DOCUMENT_HOVER)
@guarded("hover")
def on_hover(ls: TaskdslServer, params: types.HoverParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return hover.hover(analysis.document, offset, analysis.positions, client=ls.state.client,
                       library=ls.state.library, settings=ls.state.settings, positions_for=ls.positions_for,
                       path=analysis.path)


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
@guarded("definition")
def on_definition(ls: TaskdslServer, params: types.DefinitionParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    found = navigation.definition(analysis.document, offset, analysis.uri, analysis.positions,
                                  library=ls.state.library, positions_for=ls.positions_for,
                                  settings=ls.state.settings)
    if not found and ls.state.indexing and navigation.names_library_entry(
            analysis.document, offset, analysis.uri, analysis.positions, settings=ls.state.settings):
        # the answer is a location or nothing: the user is told why it is nothing yet
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, navigation.INDEXING))
    return found or None


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
@guarded("references")
def on_references(ls: TaskdslServer, params: types.ReferenceParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return navigation.references(analysis.document, offset, analysis.uri, analysis.positions,
                                 include_declaration=params.context.include_declaration,
                                 library=ls.state.library, positions_for=ls.positions_for,
                                 settings=ls.state.settings) or None


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
@guarded("prepareRename")
def on_prepare_rename(ls: TaskdslServer, params: types.PrepareRenameParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    try:
        return navigation.prepare_rename(analysis.document, offset, analysis.positions, library=ls.state.library,
                                         settings=ls.state.settings, uri=analysis.uri,
                                         positions_for=ls.positions_for)
    except navigation.RenameError as refused:
        raise JsonRpcRequestFailed(str(refused)) from None


@server.feature(types.TEXT_DOCUMENT_RENAME)
@guarded("rename")
def on_rename(ls: TaskdslServer, params: types.RenameParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    try:
        return _rename(ls, analysis, offset, params)
    except navigation.RenameError as refused:
        raise JsonRpcRequestFailed(str(refused)) from None


def _rename(ls: TaskdslServer, analysis: Analysis, offset: int, params: types.RenameParams):
    return navigation.rename(analysis.document, offset, params.new_name, analysis.uri, analysis.positions,
                             client=ls.state.client, library=ls.state.library, positions_for=ls.positions_for,
                             settings=ls.state.settings,
                             version_of=lambda uri: ls.workspace.get_text_document(uri).version if ls.is_open(uri) else None)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@guarded("documentSymbol", list)
def on_document_symbol(ls: TaskdslServer, params: types.DocumentSymbolParams):
    analysis = ls.analysis(params.text_document.uri)
    if ls.state.client.hierarchical_symbols:
        return symbols.document_symbols(analysis.document, analysis.positions)
    return symbols.flat_symbols(analysis.document, analysis.positions, analysis.uri)


@server.feature(types.WORKSPACE_SYMBOL)
@guarded("workspaceSymbol", list)
def on_workspace_symbol(ls: TaskdslServer, params: types.WorkspaceSymbolParams):
    return symbols.workspace_symbols(ls.state.library, params.query, ls.positions_for)


@server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
@guarded("foldingRange", list)
def on_folding_range(ls: TaskdslServer, params: types.FoldingRangeParams):
    analysis = ls.analysis(params.text_document.uri)
    return symbols.folding_ranges(analysis.document, ls.state.client.line_folding_only)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
@guarded("documentLink", list)
def on_document_link(ls: TaskdslServer, params: types.DocumentLinkParams):
    analysis = ls.analysis(params.text_document.uri)
    return symbols.document_links(analysis.document, analysis.positions, analysis.path, ls.state.client.link_tooltips)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix,
                                                           types.CodeActionKind.RefactorExtract,
                                                           actions.FIX_ALL_KIND]))
@guarded("codeAction", list)
def on_code_action(ls: TaskdslServer, params: types.CodeActionParams):
    if is_config_uri(params.text_document.uri):
        return config_quick_fixes(ls, params)
    analysis = ls.analysis(params.text_document.uri)
    result = ls.check(analysis)
    return actions.code_actions(analysis.document, analysis.positions, analysis.uri, params.range,
                                result.diagnostics, params.context, client=ls.state.client,
                                version=analysis.version, path=analysis.path, library=ls.state.library,
                                settings=ls.state.settings,
                                lsp_of=lambda d: to_lsp_diagnostic(d, analysis, ls.positions_for, ls.state.settings.rules_url))


def config_quick_fixes(ls: TaskdslServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes of the project's config file's problems (TD901's rename of a misspelt key), over
    the problems published for it (the open buffer's text when it is open)."""
    from taskdsl.features.util import Positions, path_to_uri
    from taskdsl.language.document import Document

    current = ls.state.config
    if current is None or current.path is None or path_to_uri(str(current.path)) != params.text_document.uri:
        return []
    document = Document(current.text)  # positions only: the file is TOML
    positions = Positions(document, ls.codec())
    analysis = Analysis(params.text_document.uri, None, document, positions, str(current.path))
    return actions.quick_fixes(list(current.problems), positions.span(params.range), positions,
                               params.text_document.uri, list(params.context.diagnostics or []),
                               lambda d: to_lsp_diagnostic(d, analysis, ls.positions_for), ls.state.client, None)


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
@guarded("inlayHint", list)
def on_inlay_hint(ls: TaskdslServer, params: types.InlayHintParams):
    analysis = ls.analysis(params.text_document.uri)
    return inlay.inlay_hints(analysis.document, analysis.positions, analysis.positions.span(params.range))


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
@guarded("formatting", list)
def on_formatting(ls: TaskdslServer, params: types.DocumentFormattingParams):
    analysis = ls.analysis(params.text_document.uri)
    return formatting.format_document(analysis.document, analysis.positions, params.options)


@server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)
@guarded("rangeFormatting", list)
def on_range_formatting(ls: TaskdslServer, params: types.DocumentRangeFormattingParams):
    analysis = ls.analysis(params.text_document.uri)
    return formatting.format_range(analysis.document, analysis.positions, params.range, params.options)



# -- the XML editing lemminx users expect (features/editing_xml.py) ---------------------------------

editing_xml = OnFirstUse("taskdsl.features.editing_xml")


@server.feature(types.TEXT_DOCUMENT_LINKED_EDITING_RANGE)
@guarded("linkedEditingRange")
def on_linked_editing_range(ls: TaskdslServer, params: types.LinkedEditingRangeParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return editing_xml.linked_editing_ranges(analysis.document, offset, analysis.positions)


@server.feature(types.TEXT_DOCUMENT_SELECTION_RANGE)
@guarded("selectionRange", list)
def on_selection_range(ls: TaskdslServer, params: types.SelectionRangeParams):
    analysis = ls.analysis(params.text_document.uri)
    offsets = [analysis.positions.offset(position) for position in params.positions]
    return editing_xml.selection_ranges(analysis.document, offsets, analysis.positions)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@guarded("documentHighlight", list)
def on_document_highlight(ls: TaskdslServer, params: types.DocumentHighlightParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return editing_xml.document_highlights(analysis.document, offset, analysis.positions, path=analysis.path or analysis.uri,
                                           library=ls.state.library, settings=ls.state.settings) or None
