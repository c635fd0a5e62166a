"""The language server (`taskdsl serve`), split by area as the features are: ``server`` (the
TaskdslServer, its ``server`` instance, start-up and the entry point), ``state`` (what it keeps),
``diagnostics`` (publishing, the re-check queue, conversions to LSP), ``library`` (the index,
file watchers, the project configuration), and the handler modules ``documents`` (text
synchronisation, watched files, pulled diagnostics), ``editing`` (the editor features) and
``commands``. Importing ``taskdsl.lsp.server`` registers every handler."""
