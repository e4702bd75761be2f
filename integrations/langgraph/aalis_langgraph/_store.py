"""``AalisStore``: LangGraph's long-term ``BaseStore`` over the Aalis metadata store.

Why the metadata store again: LangMem's memory tools and a graph's ``store`` keep small JSON
documents under hierarchical namespaces, which is what the metadata store holds in every
provider; export, import and migrate carry it (docs/integrations/langgraph.md).

Layout: an item of namespace ``("users", "ada")`` and key ``k`` is the entry ``k`` of the
metadata namespace ``langgraph-store:["users","ada"]``, holding the value, its times, its
TTL, the fields it was indexed under and how many texts were indexed. Namespace
``langgraph-store`` lists the namespaces in use. The vectors of a ``query`` search live in
the host's vector store (``_store_index.py``); a host with an embedder and no vector store
keeps them in the items and ranks in Python (the fallback), a host with no embedder ignores
``query`` (as LangGraph's ``InMemoryStore`` without an index does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, cast

from aalis_agent import host_and_bridge
from aalis_api_embedding import embedding
from aalis_api_memory import Delete, MemoryService, Put, memory as memory_capability
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.memory import _compare_values, _does_match

from aalis_langgraph._store_index import StoreIndex, texts_of

_log = logging.getLogger("aalis_langgraph")

#: The namespace that lists the store's namespaces.
REGISTRY = "langgraph-store"


def store_namespace(namespace: tuple[str, ...]) -> str:
    """The metadata namespace of a store namespace."""
    return f"{REGISTRY}:{_ns_key(namespace)}"


def _ns_key(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class AalisStore(BaseStore):
    """A LangGraph ``BaseStore`` over the host's memory provider (sync and async).

    ``index`` is LangGraph's index config; only its ``fields`` are read (default ``["$"]``,
    the whole value): embeddings come from the host's ``embedding`` capability, whatever
    ``embed``/``dims`` say, and live in the host's ``vectorstore``. Without a vector store
    the vectors are kept in the items and a search ranks them in Python; without an
    embedding provider ``query`` is ignored (as by ``InMemoryStore`` without an index),
    scores are None and a warning says so once. ``ttl`` is LangGraph's ``TTLConfig``
    (minutes); ``start_ttl_sweeper()`` deletes expired items periodically.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        host: Any,
        *,
        index: dict[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        memory: Any = None,
    ) -> None:
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        self.index_config = index
        self.fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.ttl_config = ttl
        self._sweeper: asyncio.Task[None] | None = None
        self._index = StoreIndex(self._host, store_namespace)
        self._warned = False

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    def _embedder(self) -> Any:
        handle = self._host.capability(embedding)
        return handle.use if handle.present else None

    # -- the BaseStore interface ------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        return self._bridge.call_sync(lambda: self._batch(listed))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        return await self._bridge.call(lambda: self._batch(listed))

    async def _batch(self, ops: list[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    # -- operations -------------------------------------------------------------------------

    def _refresh(self, op_refresh: bool) -> bool:
        default = (self.ttl_config or {}).get("refresh_on_read", True)
        return bool(op_refresh and default)

    async def _get(self, op: GetOp) -> Item | None:
        space = store_namespace(op.namespace)
        data = await self._store.get_metadata(space, op.key)
        if data is None or self._expired(data):
            return None
        if self._refresh(op.refresh_ttl):
            await self._touch(space, op.key, data)
        return self._item(op.namespace, op.key, data)

    async def _put(self, op: PutOp) -> None:
        space, registry_key = store_namespace(op.namespace), _ns_key(op.namespace)
        if not op.namespace or any(not isinstance(p, str) or "." in p for p in op.namespace):
            raise ValueError(f"invalid namespace {op.namespace!r}: non-empty strings without '.'")
        old = await self._store.get_metadata(space, op.key)
        if op.value is None:
            await self._store.delete_metadata(space, op.key)
            if old is not None:
                await self._index.remove(op.namespace, op.key, int(old.get("indexed", 0)))
            return
        now = _now_ms()
        ttl = op.ttl
        if ttl is None and self.ttl_config is not None:
            ttl = self.ttl_config.get("default_ttl")
        fields = list(self.fields if op.index is None else (op.index or []))
        entry: dict[str, Any] = {
            "value": dict(op.value),
            "created_at": old["created_at"] if old else now,
            "updated_at": now,
            "ttl": ttl,
            "expires_at": now + int(ttl * 60_000) if ttl is not None else None,
            "fields": fields,
        }
        texts = texts_of(entry["value"], fields)
        if self._index.parts() is not None:
            # Indexed before the entry is committed: a failure raises and writes no entry.
            await self._index.write(
                op.namespace, op.key, texts, now, int((old or {}).get("indexed", 0))
            )
            entry["indexed"] = len(texts)
        else:
            embedder = self._embedder() if texts else None
            if embedder is not None:  # no vector store: the fallback keeps them here
                entry["vectors"] = await embedder.embed_documents(texts)
                entry["model"] = embedder.model_id
        await self._store.commit_metadata(
            [
                Put(space, op.key, entry),
                Put(REGISTRY, registry_key, {"namespace": list(op.namespace)}),
            ]
        )

    def _keeps(self, op: SearchOp) -> Any:
        def keep(data: dict[str, Any]) -> bool:
            if self._expired(data):
                return False
            return not op.filter or all(
                _compare_values(data["value"].get(k), v) for k, v in op.filter.items()
            )

        return keep

    async def _namespaces_under(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        listed = [
            tuple(e.data.get("namespace") or ()) for e in await self._store.list_metadata(REGISTRY)
        ]
        return [ns for ns in listed if ns[: len(prefix)] == prefix]

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        namespaces = await self._namespaces_under(tuple(op.namespace_prefix))
        keep = self._keeps(op)
        found: list[tuple[tuple[str, ...], str, dict[str, Any], float | None]]
        indexed = self._index.parts() if op.query else None
        if op.query and indexed is not None:
            found = list(await self._vector_search(op, indexed[0], op.query, namespaces, keep))
        else:
            found = await self._scan_search(op, namespaces, keep)
        refresh = self._refresh(op.refresh_ttl)
        out: list[SearchItem] = []
        for namespace, key, data, score in found:
            if refresh:
                await self._touch(store_namespace(namespace), key, data)
            out.append(
                SearchItem(
                    namespace,
                    key,
                    data["value"],
                    _dt(data["created_at"]),
                    _dt(data["updated_at"]),
                    score=score,
                )
            )
        return out

    async def _vector_search(
        self,
        op: SearchOp,
        embedder: Any,
        text: str,
        namespaces: list[tuple[str, ...]],
        keep: Any,
    ) -> list[tuple[tuple[str, ...], str, dict[str, Any], float | None]]:
        """The host's vector store answers, scoped to the namespaces under the prefix;
        a namespace whose vectors are missing is re-indexed first (``_store_index.py``)."""
        query = await embedder.embed_query(text)
        spaces = {store_namespace(ns): ns for ns in namespaces}
        for space in await self._index.missing(list(spaces), query):
            await self._reindex(spaces[space])

        async def read(namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
            return await self._store.get_metadata(store_namespace(namespace), key)

        found = await self._index.search(list(spaces), query, op.offset + op.limit, read, keep)
        scored: list[tuple[tuple[str, ...], str, dict[str, Any], float | None]] = list(
            found[op.offset :]
        )
        if len(found) < op.offset + op.limit:
            # The scope ran out of vectors: as LangGraph's InMemoryStore does, the rest of
            # the page is items with nothing indexed (``index=False``), newest first.
            unindexed = [
                (ns, item.key, item.data, None)
                for ns in namespaces
                for item in await self._store.list_metadata(store_namespace(ns))
                if not item.data.get("indexed") and keep(item.data)
            ]
            unindexed.sort(key=lambda row: -int(row[2]["updated_at"]))
            scored.extend(unindexed[: op.limit - len(scored)])
        return scored

    async def _scan_search(
        self, op: SearchOp, namespaces: list[tuple[str, ...]], keep: Any
    ) -> list[tuple[tuple[str, ...], str, dict[str, Any], float | None]]:
        """Every item under the prefix, read and ranked here: a search without ``query``
        (newest first), and the fallbacks without a vector store or an embedder."""
        found: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
            (namespace, item.key, item.data)
            for namespace in namespaces
            for item in await self._store.list_metadata(store_namespace(namespace))
            if keep(item.data)
        ]
        scores: list[float | None] = [None] * len(found)
        embedder = self._embedder() if op.query else None
        if op.query and embedder is None and not self._warned:
            self._warned = True
            _log.warning(
                "AalisStore.search: no embedding provider, so `query` is ignored and items "
                "come newest first with no score (docs/integrations/langgraph.md)"
            )
        if embedder is not None:
            query = await embedder.embed_query(op.query)
            for i, (_ns, _key, data) in enumerate(found):
                vectors = data.get("vectors") if data.get("model") == embedder.model_id else None
                if not vectors:
                    fields = data.get("fields")
                    texts = texts_of(
                        data["value"], fields if isinstance(fields, list) else self.fields
                    )
                    vectors = await embedder.embed_documents(texts) if texts else []
                scores[i] = max((_cosine(query, v) for v in vectors), default=0.0)
            order = sorted(range(len(found)), key=lambda i: -(scores[i] or 0.0))
        else:
            order = sorted(range(len(found)), key=lambda i: -found[i][2]["updated_at"])
        return [(*found[i], scores[i]) for i in order[op.offset : op.offset + op.limit]]

    async def _reindex(self, namespace: tuple[str, ...]) -> int:
        space = store_namespace(namespace)
        items = [(e.key, e.data) for e in await self._store.list_metadata(space)]
        counts = await self._index.rebuild(namespace, items, self.fields)
        changed = [
            Put(space, key, {**data, "indexed": counts[key]})
            for key, data in items
            if key in counts and data.get("indexed") != counts[key]
        ]
        if changed:
            await self._store.commit_metadata(list(changed))
        return len(items)

    def reindex(self) -> int:
        """Re-embed every item into the host's vector store now (what a search does by
        itself for a namespace whose vectors are missing); returns how many items."""
        return self._bridge.call_sync(self._reindex_all)

    async def areindex(self) -> int:
        return await self._bridge.call(self._reindex_all)

    async def _reindex_all(self) -> int:
        if self._index.parts() is None:
            raise LookupError("AalisStore.reindex needs an embedding provider and a vector store")
        return sum([await self._reindex(ns) for ns in await self._namespaces_under(())])

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [
            tuple(e.data.get("namespace") or ()) for e in await self._store.list_metadata(REGISTRY)
        ]
        if op.match_conditions:
            namespaces = [
                ns for ns in namespaces if all(_does_match(c, ns) for c in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset : op.offset + op.limit]

    # -- TTL --------------------------------------------------------------------------------

    def _expired(self, data: dict[str, Any]) -> bool:
        expires = data.get("expires_at")
        return expires is not None and expires <= _now_ms()

    async def _touch(self, space: str, key: str, data: dict[str, Any]) -> None:
        ttl = data.get("ttl")
        if ttl is None:
            return
        await self._store.save_metadata(
            space, key, {**data, "expires_at": _now_ms() + int(ttl * 60_000)}
        )

    async def _sweep(self) -> int:
        removed = 0
        for entry in await self._store.list_metadata(REGISTRY):
            namespace = tuple(entry.data.get("namespace") or ())
            space = store_namespace(namespace)
            items = await self._store.list_metadata(space)
            doomed = [i for i in items if self._expired(i.data)]
            ops: list[Put | Delete] = [Delete(space, i.key) for i in doomed]
            if doomed and len(doomed) == len(items):
                ops.append(Delete(REGISTRY, entry.key))
            if ops:
                await self._store.commit_metadata(ops)
            for item in doomed:  # after the entries: a vector left behind is skipped
                await self._index.remove(namespace, item.key, int(item.data.get("indexed", 0)))
            removed += len(doomed)
        return removed

    def sweep_ttl(self) -> int:
        """Delete every expired item now; returns how many went."""
        return self._bridge.call_sync(self._sweep)

    async def asweep_ttl(self) -> int:
        return await self._bridge.call(self._sweep)

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep every ``sweep_interval_minutes`` (default: the TTL config's, else 5) in a
        task of the running loop until ``stop_ttl_sweeper``; a failed sweep is retried at
        the next interval."""
        minutes = (
            sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        )
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper

        async def loop() -> None:
            while True:
                await asyncio.sleep(float(minutes) * 60)
                try:
                    await self.asweep_ttl()
                except Exception:  # the next interval tries again
                    continue

        self._sweeper = asyncio.get_running_loop().create_task(loop())
        return self._sweeper

    async def stop_ttl_sweeper(self) -> None:
        """Stop the sweeper task (nothing happens when none runs)."""
        task, self._sweeper = self._sweeper, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    def _item(self, namespace: tuple[str, ...], key: str, data: dict[str, Any]) -> Item:
        return Item(
            value=data["value"],
            key=key,
            namespace=namespace,
            created_at=_dt(data["created_at"]),
            updated_at=_dt(data["updated_at"]),
        )


__all__ = ["REGISTRY", "AalisStore", "store_namespace"]
