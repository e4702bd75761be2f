"""``AalisStore``'s semantic index: its items' vectors in the host's vector store.

Why the host's vector store and not vectors in the items: a search then asks the store for
the nearest vectors *in the namespaces searched* (the scope is part of the query) instead
of reading and ranking every item in Python, and the vectors sit where recall's do, in
SQLite or pgvector (docs/integrations/langgraph.md, "Long-term memory").

Layout in the vector store, beside recall's messages and never mixed with them:

- model ``langgraph-store/<embedder model id>``: recall searches its embedder's own model
  id, so these vectors never reach a recall, and a new embedder starts a new space;
- session = the item's metadata namespace (``store_namespace``), so a search is scoped to
  the namespaces under its prefix;
- one record per indexed text of an item (role ``item``), its id the JSON list
  ``["langgraph-store", namespace, key, n]``, so a hit names its item;
- one marker per namespace (role ``marker``), written with every indexed put: a namespace
  whose marker is missing (its vectors were dropped by ``aalis clear --all``, which empties
  the vector store, or the items were put before a vector store or under another embedder)
  is re-indexed from the metadata store, the truth, before the search answers. Recall's
  check, repair and reindex leave records of these roles alone (docs/recall.md, "Who owns
  a vector").

The metadata entry is the truth: a hit whose item is gone, expired or has fewer texts
now is skipped (and a gone one's vector deleted), so nothing removed comes back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aalis_api_embedding import embedding
from aalis_api_vectorstore import ScopeFilter, VectorRecord, vectorstore
from langgraph.store.base.embed import get_text_at_path

_log = logging.getLogger("aalis_langgraph")

#: The first element of every item record's id, and the prefix of the model id.
TAG = "langgraph-store"
ITEM_ROLE = "item"
MARKER_ROLE = "marker"

#: ``(namespace, key, entry)`` of an item found by a search, with its best score.
Found = tuple[tuple[str, ...], str, dict[str, Any], float]
#: Reads an item's entry: ``(namespace, key) -> entry or None``.
Reader = Callable[[tuple[str, ...], str], Awaitable[dict[str, Any] | None]]


def record_id(namespace: tuple[str, ...], key: str, n: int) -> str:
    """The vector store id of an item's ``n``-th indexed text."""
    return json.dumps([TAG, list(namespace), key, n], ensure_ascii=False, separators=(",", ":"))


def marker_id(space: str) -> str:
    """The vector store id of a namespace's marker."""
    return f"{TAG}-marker:{space}"


def _item_of(message_id: str) -> tuple[tuple[str, ...], str, int] | None:
    try:
        parts = json.loads(message_id)
    except ValueError:
        return None
    if not isinstance(parts, list) or len(parts) != 4 or parts[0] != TAG:
        return None
    return tuple(parts[1]), str(parts[2]), int(parts[3])


def texts_of(value: dict[str, Any], fields: Sequence[str]) -> list[str]:
    """The texts of ``value`` at ``fields`` (LangGraph's paths), in order."""
    return [t for f in fields for t in get_text_at_path(value, f)]


class StoreIndex:
    """The vector side of an ``AalisStore`` (see the module)."""

    def __init__(self, host: Any, space_of: Callable[[tuple[str, ...]], str]) -> None:
        self._host = host
        self._space_of = space_of

    def parts(self) -> tuple[Any, Any] | None:
        """``(embedder, vector store)`` when the host has both, else None."""
        embedder = self._host.capability(embedding)
        store = self._host.capability(vectorstore)
        if not embedder.present or not store.present:
            return None
        return embedder.use, store.use

    @staticmethod
    def model(embedder: Any) -> str:
        return f"{TAG}/{embedder.model_id}"

    def _records(
        self,
        embedder: Any,
        namespace: tuple[str, ...],
        key: str,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]],
        updated_at: int,
    ) -> list[VectorRecord]:
        space, model = self._space_of(namespace), self.model(embedder)
        return [
            VectorRecord(
                message_id=record_id(namespace, key, n),
                session_id=space,
                timestamp=updated_at,
                role=ITEM_ROLE,
                model_id=model,
                text=text,
                vector=vector,
            )
            for n, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]

    def _marker(self, embedder: Any, space: str, vector: Sequence[float]) -> VectorRecord:
        return VectorRecord(
            message_id=marker_id(space),
            session_id=space,
            timestamp=0,
            role=MARKER_ROLE,
            model_id=self.model(embedder),
            text="",
            vector=vector,
        )

    async def write(
        self,
        namespace: tuple[str, ...],
        key: str,
        texts: Sequence[str],
        updated_at: int,
        old_count: int,
    ) -> None:
        """Index an item's ``texts`` (replacing its ``old_count`` earlier ones), before its
        entry is committed: a failure raises and the put writes nothing."""
        found = self.parts()
        if found is None:
            return
        embedder, store = found
        space = self._space_of(namespace)
        if texts:  # an item without texts (``index=False``) costs no embedding
            vectors = await embedder.embed_documents(list(texts))
            records = self._records(embedder, namespace, key, texts, vectors, updated_at)
            await store.upsert([*records, self._marker(embedder, space, vectors[0])])
        if old_count > len(texts):
            await store.delete(
                space, [record_id(namespace, key, n) for n in range(len(texts), old_count)]
            )

    async def remove(self, namespace: tuple[str, ...], key: str, count: int) -> None:
        """Delete an item's vectors, after its entry is gone (a failure leaves orphans,
        which searches skip and delete)."""
        found = self.parts()
        if found is None or count <= 0:
            return
        _embedder, store = found
        await store.delete(
            self._space_of(namespace), [record_id(namespace, key, n) for n in range(count)]
        )

    async def missing(self, spaces: Sequence[str], probe: Sequence[float]) -> list[str]:
        """The namespaces among ``spaces`` whose marker is not in the vector store."""
        found = self.parts()
        if found is None or not spaces:
            return []
        embedder, store = found
        where = ScopeFilter(
            model_id=self.model(embedder), session_ids=frozenset(spaces), roles={MARKER_ROLE}
        )
        present = {h.session_id for h in await store.search(probe, len(spaces), where)}
        return [s for s in spaces if s not in present]

    async def rebuild(
        self,
        namespace: tuple[str, ...],
        items: Sequence[tuple[str, dict[str, Any]]],
        default_fields: Sequence[str],
    ) -> dict[str, int]:
        """Re-index a namespace from its entries (the metadata store's): every vector of
        the session is replaced, the marker written last. Returns each item's count of
        indexed texts (the caller records the ones that changed)."""
        counts: dict[str, int] = {}
        found = self.parts()
        if found is None:
            return counts
        embedder, store = found
        space = self._space_of(namespace)
        await store.delete(space)
        marker_vector: Sequence[float] | None = None
        for key, entry in items:
            fields = entry.get("fields")
            texts = texts_of(entry["value"], fields if isinstance(fields, list) else default_fields)
            counts[key] = len(texts)
            if not texts:
                continue
            vectors = await embedder.embed_documents(texts)
            marker_vector = marker_vector or vectors[0]
            await store.upsert(
                self._records(embedder, namespace, key, texts, vectors, int(entry["updated_at"]))
            )
        if marker_vector is None:
            marker_vector = await embedder.embed_query(TAG)
        await store.upsert([self._marker(embedder, space, marker_vector)])
        _log.info("AalisStore: namespace %s re-indexed (%d items)", space, len(items))
        return counts

    async def search(
        self,
        spaces: Sequence[str],
        query_vector: Sequence[float],
        wanted: int,
        read: Reader,
        keep: Callable[[dict[str, Any]], bool],
    ) -> list[Found]:
        """The best ``wanted`` items of ``spaces`` that ``keep`` accepts, best first.

        The vector store is asked for more hits until ``wanted`` items pass (the filter
        and the expiry are exact, never a post-filter of one fixed top-k) or the scope
        has no more vectors."""
        found = self.parts()
        if found is None or wanted <= 0 or not spaces:
            return []
        embedder, store = found
        where = ScopeFilter(
            model_id=self.model(embedder), session_ids=frozenset(spaces), roles={ITEM_ROLE}
        )
        k = max(2 * wanted, 16)
        seen: set[tuple[tuple[str, ...], str]] = set()
        out: list[Found] = []
        while True:
            hits = await store.search(query_vector, k, where)
            for hit in hits:
                parsed = _item_of(hit.message_id)
                if parsed is None:
                    continue
                namespace, key, n = parsed
                if (namespace, key) in seen:
                    continue
                entry = await read(namespace, key)
                if entry is None or n >= int(entry.get("indexed", 0)):
                    if entry is None:  # its item is gone: the vector is an orphan
                        await store.delete(hit.session_id, [hit.message_id])
                    continue
                seen.add((namespace, key))
                if keep(entry):
                    out.append((namespace, key, entry, float(hit.score)))
                    if len(out) >= wanted:
                        return out
            if len(hits) < k:
                return out
            k *= 4


__all__: list[str] = []
