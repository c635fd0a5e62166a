"""A module imported when first used: what the language server must not wait for before it
answers initialize (the client waits for that answer) is reached through one of these."""

from __future__ import annotations

import importlib


class OnFirstUse:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        return getattr(importlib.import_module(self._name), attribute)
