"""Ranks of the wanted memories under three rankers, through the real plugin and store.

One history is saved into memory-sqlite and indexed by memory-vector into vectorstore-sqlite
(the embedded default), in a scratch directory; then every query is asked three ways:

* ``vector``: ``recall`` through memory-vector over a store that shows only its vector leg
  (``_VectorLegOnly`` hides ``lexical_search``), which is the recall of today;
* ``lexical``: the store's own ``lexical_search(query, k, where)``, with the scope filter
  memory-vector would use (the session, the embedder's model, user and assistant turns);
* ``fused``: ``recall`` through memory-vector over the whole store, lexical leg included;
* ``reranked``: the same recall with the re-ranking step on (``rerank_depth``; the vector
  and fused rankers run with it off, so the three columns isolate each step).

The last two exist only when the store has a lexical leg
(``callable(getattr(store, "lexical_search", None))``); otherwise their ranks are None and the
benchmark prints ``n/a (store has no lexical leg)``. This module ranks nothing itself: every
ordering is the product's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _harness import scratch_dir

SESSION = "memories"
T0 = 1_700_000_000_000
NO_LEXICAL = "n/a (store has no lexical leg)"
RANKERS = ("vector", "lexical", "fused", "reranked")
#: Candidates re-ranked by the ``reranked`` ranker (memory-vector's default).
RERANK_DEPTH = 10
Ranks = list[int | None]


class _VectorLegOnly:
    """The store with its lexical leg hidden: what memory-vector ranks with when a store
    has none (the vector-only recall, measured beside the fused one on the same file)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "lexical_search":
            raise AttributeError(name)
        return getattr(self._store, name)


def has_lexical(store: Any) -> bool:
    return callable(getattr(store, "lexical_search", None))


def _providers(embedder: Any, path: Path, *, vector_only: bool, store_type: Any) -> Any:
    from aalis_api_embedding import embedding
    from aalis_api_vectorstore import vectorstore
    from aalis_plugin_vectorstore_sqlite import SqliteVectorStore

    from aalis_core import Plugin

    class Providers(Plugin):
        name = "bench-providers"
        provides = (embedding, vectorstore)

        def __init__(self) -> None:
            self.store: Any = None

        async def start(self, ctx: Any) -> None:
            self.store = await (store_type or SqliteVectorStore)(path).open()
            ctx.provide(embedding, embedder)
            ctx.provide(vectorstore, _VectorLegOnly(self.store) if vector_only else self.store)

        async def stop(self) -> None:
            if self.store is not None:
                await self.store.close()

    return Providers()


def _config(work: Path, k: int, rerank_depth: int = 0) -> dict[str, Any]:
    return {
        "host": {"data_dir": str(work)},
        "plugins": {
            # isolated: the scope is the session that holds the history; no neighbours,
            # which do not change the order and cost a read per hit.
            "memory-vector": {
                "cross_session_mode": "isolated",
                "k": k,
                "neighbours": 0,
                "rerank_depth": rerank_depth,
            }
        },
    }


def _rank(timestamps: Sequence[int], wanted: int) -> int | None:
    return timestamps.index(wanted) + 1 if wanted in timestamps else None


def _first(timestamps: Sequence[int]) -> int | None:
    """The index of the message ranked first (its timestamp is ``T0 + index`` seconds)."""
    return (timestamps[0] - T0) // 1000 if timestamps else None


async def _recall_ranks(
    host: Any, queries: Sequence[str], targets: Sequence[int], k: int, firsts: Ranks
) -> Ranks:
    from aalis_api_vectorstore import recall

    service = host.capability(recall).use
    ranks: Ranks = []
    for query, target in zip(queries, targets, strict=True):
        hits = await service.recall(SESSION, query, k=k)
        stamps = [hit.message.timestamp for hit in hits]
        ranks.append(_rank(stamps, T0 + target * 1000))
        firsts.append(_first(stamps))
    return ranks


async def measure(
    embedder: Any,
    texts: Sequence[str],
    queries: Sequence[str],
    targets: Sequence[int],
    *,
    k: int = 5,
    store_type: Any = None,
) -> tuple[dict[str, Ranks | None], dict[str, Ranks], dict[str, float]]:
    """Index ``texts`` (message ``i`` at ``T0 + i`` seconds), then rank ``texts[targets[j]]``
    for ``queries[j]`` under each ranker: ``(ranks by ranker, index of the message ranked
    first by ranker, timings)``; a ranker the store cannot serve maps to None.
    ``store_type`` replaces ``SqliteVectorStore`` (a subclass, for the benchmark's own test)."""
    import time

    from aalis_api_memory import memory
    from aalis_api_vectorstore import ScopeFilter
    from aalis_plugin_memory_sqlite import MemorySqlite
    from aalis_plugin_memory_vector import MemoryVector
    from aalis_schema_message import Message

    from aalis_core import Host

    out: dict[str, Ranks | None] = dict.fromkeys(RANKERS)
    firsts: dict[str, Ranks] = {ranker: [] for ranker in RANKERS}
    timings: dict[str, float] = {}
    with scratch_dir("recall-quality") as work:
        path = work / "aalis-vectors.db"
        plugin = MemoryVector()
        providers = _providers(embedder, path, vector_only=False, store_type=store_type)
        async with Host(
            _config(work, k), [MemorySqlite(), providers, plugin], discover=False
        ) as host:
            mem = host.capability(memory).use
            started = time.perf_counter()
            batch: list[Message] = []
            for i, text in enumerate(texts):
                message = Message(role="user", content=text, timestamp=T0 + i * 1000)
                await mem.save_message(SESSION, message)
                batch.append(message)
                if len(batch) == 32 or i == len(texts) - 1:
                    await host.emit("memory_messages_saved", session_id=SESSION, messages=batch)
                    batch = []
            assert plugin.indexer is not None
            await plugin.indexer.settle(1800)
            timings["index_ms_per_message"] = (time.perf_counter() - started) * 1000 / len(texts)
            store = providers.store
            if has_lexical(store):
                started = time.perf_counter()
                out["fused"] = await _recall_ranks(host, queries, targets, k, firsts["fused"])
                timings["fused_ms_per_query"] = (
                    (time.perf_counter() - started) * 1000 / len(queries)
                )
                where = ScopeFilter(
                    model_id=str(embedder.model_id),
                    session_ids=frozenset({SESSION}),
                    roles=frozenset({"user", "assistant"}),
                )
                lexical: Ranks = []
                started = time.perf_counter()
                for query, target in zip(queries, targets, strict=True):
                    hits = await store.lexical_search(query, k, where)
                    stamps = [hit.timestamp for hit in hits]
                    lexical.append(_rank(stamps, T0 + target * 1000))
                    firsts["lexical"].append(_first(stamps))
                timings["lexical_ms_per_query"] = (
                    (time.perf_counter() - started) * 1000 / len(queries)
                )
                out["lexical"] = lexical
        if out["fused"] is not None:
            # The same files and store, the re-ranking step on.
            async with Host(
                _config(work, k, RERANK_DEPTH),
                [
                    MemorySqlite(),
                    _providers(embedder, path, vector_only=False, store_type=store_type),
                    MemoryVector(),
                ],
                discover=False,
            ) as host:
                started = time.perf_counter()
                out["reranked"] = await _recall_ranks(host, queries, targets, k, firsts["reranked"])
                timings["reranked_ms_per_query"] = (
                    (time.perf_counter() - started) * 1000 / len(queries)
                )
        # The same files, the lexical leg hidden: today's vector-only recall.
        async with Host(
            _config(work, k),
            [
                MemorySqlite(),
                _providers(embedder, path, vector_only=True, store_type=store_type),
                MemoryVector(),
            ],
            discover=False,
        ) as host:
            started = time.perf_counter()
            out["vector"] = await _recall_ranks(host, queries, targets, k, firsts["vector"])
            timings["vector_ms_per_query"] = (time.perf_counter() - started) * 1000 / len(queries)
    return out, firsts, {key: round(value, 2) for key, value in timings.items()}


def scores(ranks: Ranks | None) -> dict[str, float | None]:
    """hit@1, hit@5 and MRR (over the first k) of a list of ranks; None when not measured."""
    if ranks is None or not ranks:
        return {"hit@1": None, "hit@5": None, "mrr": None}
    n = len(ranks)
    return {
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@5": round(sum(1 for r in ranks if r is not None and r <= 5) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r is not None) / n, 3),
    }


__all__ = ["NO_LEXICAL", "RANKERS", "RERANK_DEPTH", "Ranks", "has_lexical", "measure", "scores"]
