"""The re-check queue runs by itself: after an open changed a definition, the other open document
is published again with the diagnostics the change caused, after the opened one. (test_rechecks.py
holds the queue with a long debounce to show it is a queue; here it runs at once.)"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import pull_client
from test_rechecks import published, publishes, task

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETTINGS = {"debounce": 0}


async def test_the_other_document_is_rechecked_after_the_opened_one(client: LanguageClient, docs):
    if pull_client(client):
        pytest.skip("a pull client is asked to refresh instead")
    first = await docs.open("queued-first.task.xml", task("queued"))
    await asyncio.wait_for(published(client, first, 1), 60)
    assert list(publishes(client, first)[0].diagnostics) == []
    second = await docs.open("queued-second.task.xml", task("queued", "y"))
    # no save, no edit: the queue alone brings the first document up to date (the timeout is a hang guard)
    await asyncio.wait_for(published(client, first, 2), 60)
    assert [d.code for d in publishes(client, first)[-1].diagnostics] == ["TD502"]
    assert [d.code for d in publishes(client, second)[0].diagnostics] == ["TD502"]
    order = [p.uri for p in client.published if p.uri in (first, second)]
    assert order[:3] == [first, second, first]
    docs.close(first)
    docs.close(second)
