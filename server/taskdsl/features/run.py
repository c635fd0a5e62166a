"""Where the editor offers "Run task": the code lens on each runnable target and the code action
(pure functions over the document; the command itself runs in `taskdsl.lsp.run`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from taskdsl.language.document import Document
from taskdsl.support.lazy import OnFirstUse

if TYPE_CHECKING:
    from taskdsl.evaluator.plan import RunTarget


# The evaluator (compiler, forms) is imported on the first run or code lens, not before the server
# answers initialize: the run command and its code lens are registered before that.
plan_module = OnFirstUse("taskdsl.evaluator.plan")

COMMAND = "taskdsl.runTask"
RUN_TITLE = "▶ Run task"


# ---------------------------------------------------------------------------------------------
# where runs are offered: the root, and each named task / template of a library file


def _arguments(uri: str, target: RunTarget) -> list[Any]:
    return [uri] if target.name is None else [uri, target.name]


def run_command(uri: str, target: RunTarget, title: str = RUN_TITLE) -> types.Command:
    return types.Command(title=title, command=COMMAND, arguments=_arguments(uri, target))


def run_code_lenses(document: Document, uri: str, positions, path: str | None = None) -> list[types.CodeLens]:
    """A "▶ Run task" lens on the start tag of each runnable target."""
    lenses = []
    for target in plan_module.runnable_targets(document, path):
        title = RUN_TITLE if target.name is None else f"{RUN_TITLE} '{target.name}'"
        lenses.append(types.CodeLens(range=positions.range(target.element.name_span),
                                     command=run_command(uri, target, title)))
    return lenses


def run_code_actions(document: Document, uri: str, range: types.Range, positions=None,
                     path: str | None = None, only: list[str] | None = None) -> list[types.CodeAction]:
    """"Run task" code actions (offered everywhere: Neovim 0.10 has no code lens). In a library
    file, the entry around the range; outside any, one action per entry. A request filtered by
    ``only`` (the client wants specific kinds) gets none: these actions have no kind."""
    if only:
        return []
    targets = plan_module.runnable_targets(document, path)
    if not targets:
        return []
    if len(targets) > 1 or targets[0].name is not None:
        if positions is None:
            from taskdsl.features.util import Positions
            positions = Positions(document)
        offset = positions.offset(range.start)
        around = [t for t in targets if t.element.span.start <= offset <= t.element.span.end]
        targets = around or targets
    actions = []
    for target in targets:
        title = "Run task" if target.name is None else f"Run task '{target.name}'"
        actions.append(types.CodeAction(title=title, command=run_command(uri, target, title)))
    return actions
