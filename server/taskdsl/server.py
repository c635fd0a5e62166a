"""`taskdsl serve`'s old address, kept for callers and scripts: the server now lives in the
package ``taskdsl.lsp`` (see its ``__init__`` for which module holds what). Importing this module
imports ``taskdsl.lsp.server``, which registers every handler; nothing here imports the checker,
the rules or the features (initialize is answered first)."""

from taskdsl.lsp.server import (DSL_ROOTS, RUN_TASK_COMMAND, DocumentUnavailable, JsonRpcRequestFailed,  # noqa: F401
                                LspTextDocument, LspWorkspace, TaskdslProtocol, TaskdslServer, guarded,
                                import_features, main, server)
from taskdsl.lsp.state import Analysis, State  # noqa: F401
from taskdsl.lsp.diagnostics import is_config_uri, to_lsp_diagnostic, warm_up  # noqa: F401
from taskdsl.lsp.library import build_library, pull_settings, register_watchers  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
