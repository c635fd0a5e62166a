"""Rank 9, lsp: how an editor reaches taskdsl — the language server (`taskdsl serve`), the Run task,
tests, previews, graphs, new tasks, and `remote` (serve --tcp/--ws).
May import: support … features (ranks 0–8).

Split by area as the features are: ``server`` (the
TaskdslServer, its ``server`` instance, ``guarded``, start-up and the entry point ``main``),
``state`` (what it keeps), ``diagnostics`` (publishing, the re-check queue, conversions to LSP),
``library`` (the index, file watchers, the project configuration), and the handler modules
``documents`` (text synchronisation, watched files, pulled diagnostics), ``editing`` (the editor
features) and ``commands``. The handler modules register themselves on ``server`` when
imported; they are imported here, so that importing any module of this package registers every
handler, in this order. None imports the checker, the rules or the
features at its top: initialize is answered first."""

from taskdsl.lsp.server import main  # noqa: F401  (the instance stays `taskdsl.lsp.server.server`: no name shadows the module)
from taskdsl.lsp import documents  # noqa: F401,E402  text sync, watched files, pulled diagnostics
from taskdsl.lsp import editing  # noqa: F401,E402  completion, hover, navigation … formatting
from taskdsl.lsp import commands  # noqa: F401,E402  extractTask, revalidateAll, runTask, matchTasks
