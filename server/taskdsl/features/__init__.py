"""Rank 8, features: what the editor shows — editor features as pure functions over the model.
May import: support … authoring (ranks 0–7).

Each module takes a parsed ``Document`` (plus the library, settings and the client's
capabilities where it needs them) and returns lsprotocol values. Offsets are turned into
client positions by ``util.Positions``, which uses pygls's position codec, so the same code
serves UTF-16, UTF-8 and UTF-32 clients. The handlers of ``taskdsl.lsp`` only wire LSP methods to them."""
