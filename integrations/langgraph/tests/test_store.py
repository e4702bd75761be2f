"""``AalisStore`` on a real SQLite store, with embeddings from the host (embedding-hash):
namespaces, put/get/delete, filters, semantic search, list_namespaces, TTL and its sweeper,
and a graph node that reads and writes it through LangGraph's runtime."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_agent import SyncHost
from aalis_api_memory import memory
from aalis_langgraph import REGISTRY, AalisStore, store_namespace
from aalis_plugin_embedding_hash import EmbeddingHash
from aalis_plugin_memory_sqlite import MemorySqlite
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from aalis_core import Host


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    async with Host(config, [MemorySqlite(), EmbeddingHash()], discover=False) as started:
        yield started


async def test_put_get_delete_and_namespaces(host: Host) -> None:
    store = AalisStore(host)
    await store.aput(("users", "ada"), "prefs", {"seat": "window", "meals": ["veg"]})
    await store.aput(("users", "bob"), "prefs", {"seat": "aisle"})
    await store.aput(("docs",), "a", {"text": "hello"})
    item = await store.aget(("users", "ada"), "prefs")
    assert item is not None
    assert item.value == {"seat": "window", "meals": ["veg"]}
    assert (item.namespace, item.key) == (("users", "ada"), "prefs")
    created = item.created_at
    await store.aput(("users", "ada"), "prefs", {"seat": "aisle"})
    again = await store.aget(("users", "ada"), "prefs")
    assert again is not None
    assert again.created_at == created
    assert again.updated_at >= created
    assert await store.alist_namespaces() == [("docs",), ("users", "ada"), ("users", "bob")]
    assert await store.alist_namespaces(prefix=("users",)) == [("users", "ada"), ("users", "bob")]
    assert await store.alist_namespaces(max_depth=1) == [("docs",), ("users",)]
    await store.adelete(("users", "bob"), "prefs")
    assert await store.aget(("users", "bob"), "prefs") is None
    with pytest.raises(ValueError, match="namespace"):
        await store.aput(("bad.name",), "k", {"v": 1})
    # Items are metadata of the store: what export and migrate carry.
    metadata = host.capability(memory).use
    assert [e.key for e in await metadata.list_metadata(store_namespace(("docs",)))] == ["a"]
    assert len(await metadata.list_metadata(REGISTRY)) == 3


async def test_filter_and_semantic_search_through_the_hosts_embedder(host: Host) -> None:
    store = AalisStore(host, index={"fields": ["text"]})
    facts = {
        "f1": {"text": "Ada's passport number is X1234567", "kind": "id"},
        "f2": {"text": "Ada prefers window seats on long flights", "kind": "pref"},
        "f3": {"text": "The meeting with Bob is on Tuesday", "kind": "event"},
    }
    for key, value in facts.items():
        await store.aput(("memories", "ada"), key, value)
    hits = await store.asearch(("memories",), query="passport number", limit=2)
    assert hits[0].key == "f1"
    assert hits[0].score is not None
    assert hits[0].score > (hits[1].score or 0)
    only = await store.asearch(("memories",), filter={"kind": "pref"})
    assert [h.key for h in only] == ["f2"]
    assert await store.asearch(("other",)) == []
    stored = await host.capability(memory).use.get_metadata(
        store_namespace(("memories", "ada")), "f1"
    )
    assert stored is not None
    assert stored["model"].startswith("hash")


async def test_items_expire_and_the_sweeper_removes_them(host: Host) -> None:
    store = AalisStore(host, ttl={"default_ttl": 0.001, "refresh_on_read": False})  # 60 ms
    await store.aput(("t",), "short", {"v": 1})
    await store.aput(("t",), "long", {"v": 2}, ttl=10)
    assert await store.aget(("t",), "short") is not None
    await asyncio.sleep(0.1)
    assert await store.aget(("t",), "short") is None  # expired items are never returned
    assert [h.key for h in await store.asearch(("t",))] == ["long"]
    assert await store.asweep_ttl() == 1
    keys = [e.key for e in await host.capability(memory).use.list_metadata(store_namespace(("t",)))]
    assert keys == ["long"]

    task = await store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    await store.aput(("t",), "gone", {"v": 3}, ttl=0.0005)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = await host.capability(memory).use.list_metadata(store_namespace(("t",)))
        if [e.key for e in left] == ["long"]:
            break
        await asyncio.sleep(0.05)
    assert [e.key for e in left] == ["long"]
    await store.stop_ttl_sweeper()
    assert task.done()


async def test_a_graph_node_uses_it_as_its_store(host: Host) -> None:
    store = AalisStore(host)

    async def remember(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(("notes",), "last", {"text": state["messages"][-1].content})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    graph = builder.compile(store=store)
    await graph.ainvoke({"messages": [("user", "buy milk")]})
    item = await store.aget(("notes",), "last")
    assert item is not None
    assert item.value == {"text": "buy milk"}


def test_the_sync_side_on_a_sync_host(tmp_path: Path) -> None:
    config = {"host": {"data_dir": str(tmp_path / "data")}}
    with SyncHost(config, [MemorySqlite(), EmbeddingHash()], discover=False) as aalis:
        store = AalisStore(aalis)
        store.put(("a",), "k", {"text": "green tea"})
        store.put(("a",), "j", {"text": "black coffee"})
        item = store.get(("a",), "k")
        assert item is not None
        assert item.value == {"text": "green tea"}
        hits = store.search(("a",), query="coffee")
        assert hits[0].key == "j"
        assert store.list_namespaces() == [("a",)]
