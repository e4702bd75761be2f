"""Recall: the scope of a session, the filtered search (both legs, fused), and neighbours.

The vector leg ranks by the store's cosine; when the store also searches by words
(``lexical_search``), both legs run with the same scope and are fused by rank
(``fusion.py``); every fused hit goes through the same recall check. For a query with no
identifier or proper name, the vector leg's best candidates are re-ranked first
(``_rerank.py``). Recency only breaks exact ties. Small models'
cosines sit in a narrow band, so blending in recency (the TS default's 0.7·cos + 0.3·recency)
lets a fresh unrelated turn outrank an old relevant one; ``benchmarks/recall_quality.py``
measures the plain cosine that is used here.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aalis_api_embedding import SEMANTIC, embed_queries, embedder_kind
from aalis_api_memory import MemoryService, MetadataKeys, supports
from aalis_api_vectorstore import (
    LexicalSearch,
    RecallHit,
    RecallUnavailable,
    ScopeFilter,
    VectorHit,
)
from aalis_schema_message import Message

from aalis_plugin_memory_vector._config import MemoryVectorConfig
from aalis_plugin_memory_vector._indexer import Indexer

if TYPE_CHECKING:
    from aalis_core import Handle
from aalis_plugin_memory_vector._persons import People, PersonRegistry
from aalis_plugin_memory_vector._scope import (
    OVERRIDES_NAMESPACE,
    UNSET,
    MalformedOverride,
    ResolvedMode,
    override_value,
    resolve_mode,
)
from aalis_plugin_memory_vector._text import (
    INDEXED_ROLES,
    clip,
    indexable,
    key_of,
)
from aalis_plugin_memory_vector._verify import Wanted

_UNSET = UNSET


class VectorRecall:
    """The ``recall`` provider (and the search behind ``aalis vector search``)."""

    def __init__(
        self,
        *,
        embedding: Any,
        vectorstore: Any,
        memory: Handle[MemoryService],
        config: MemoryVectorConfig,
        indexer: Indexer,
        logger: Any,
        persons: PersonRegistry | None = None,
    ) -> None:
        self._persons = persons
        self._embedding = embedding
        self._store = vectorstore
        self._memory = memory
        self._config = config
        self._indexer = indexer
        self._logger = logger

    # -- scope ------------------------------------------------------------------------------

    async def _recent(self, session_id: str) -> list[Message]:
        if not self._memory.present:
            return []
        try:
            return list(await self._memory.use.get_history(session_id, 20))
        except Exception:
            return []

    async def _people(self, session_id: str) -> People:
        """The session's people, with its newest messages merged in first: a person who just
        spoke (saved, not yet announced) already counts, so a private session that just
        became a group is never recalled from as private."""
        if self._persons is None or not self._memory.present:
            return People(group=True)
        try:
            return await self._persons.observe(session_id, await self._recent(session_id))
        except Exception as exc:
            self._logger.warning("session people unreadable", session_id=session_id, error=str(exc))
            return People(group=True)  # unknown: this session only

    async def _override(self, session_id: str) -> object:
        """The session layer: ``UNSET``, a mode string, or a ``MalformedOverride``."""
        if not self._memory.present:
            return _UNSET
        memory = self._memory.use
        try:
            data = await memory.get_metadata(OVERRIDES_NAMESPACE, session_id)
            # an entry that exists but cannot be read is a broken layer, not an absent one
            if (
                data is None
                and supports(memory, MetadataKeys, "list_metadata_keys")
                and session_id in await memory.list_metadata_keys(OVERRIDES_NAMESPACE)
            ):
                return MalformedOverride("<unreadable entry>")
        except Exception as exc:
            self._logger.warning("session scope unreadable", session_id=session_id, error=str(exc))
            return MalformedOverride("<unreadable entry>")  # narrowest, never wider
        return override_value(data)

    async def mode_of(self, session_id: str, platform: str | None = None) -> ResolvedMode:
        """The ``cross_session_mode`` in force for ``session_id`` and the layer it came from."""
        session_value = await self._override(session_id)
        if platform is None:
            platform = (await self._people(session_id)).platform
        platform_value: object = _UNSET
        profile = self._config.platforms.get(platform) if platform is not None else None
        if profile is not None and profile.cross_session_mode is not None:
            platform_value = profile.cross_session_mode
        resolved = resolve_mode(session_value, platform_value, self._config.cross_session_mode)
        if resolved.invalid is not None:
            self._logger.warning(
                "invalid cross_session_mode; recalling from this session only",
                session_id=session_id,
                layer=resolved.layer,
                value=repr(resolved.invalid)[:80],
            )
        return resolved

    async def scope(
        self, session_id: str, model_id: str, *, platform: str | None, narrow: str | None
    ) -> ScopeFilter:
        """The filter of a recall from ``session_id``; ``narrow`` is an explicit platform the
        caller asked for (it narrows every mode). ``user`` and ``platform`` name the sessions
        in scope from the person registry (docs/host/privacy.md)."""
        own = await self._people(session_id)
        resolved = await self.mode_of(session_id, platform or own.platform)
        roles = frozenset(INDEXED_ROLES)
        if resolved.mode == "all":
            return ScopeFilter(model_id=model_id, session_ids=None, roles=roles, platform=narrow)
        sessions = frozenset({session_id})
        if resolved.mode in ("user", "platform") and self._persons is not None:
            try:
                sessions = await self._persons.sessions_of(session_id, own, resolved.mode)
            except Exception as exc:
                self._logger.warning(
                    "person registry unreadable; recalling from this session only",
                    session_id=session_id,
                    error=str(exc),
                )
        return ScopeFilter(model_id=model_id, session_ids=sessions, roles=roles, platform=narrow)

    # -- search -----------------------------------------------------------------------------

    def _ready(self) -> tuple[Any, Any]:
        if not self._embedding.present:
            raise RecallUnavailable("no embedding provider is active")
        if not self._store.present:
            raise RecallUnavailable("no vector store is active")
        return self._embedding.use, self._store.use

    async def recall(
        self,
        session_id: str,
        query: str,
        *,
        k: int | None = None,
        platform: str | None = None,
    ) -> list[RecallHit]:
        """Messages relevant to ``query`` within the scope of ``session_id``, best first."""
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, got {type(session_id).__name__}")
        if platform is not None and not isinstance(platform, str):
            raise TypeError(f"platform must be a str or None, got {type(platform).__name__}")
        return await self.search(session_id, query, k=k, narrow=platform)

    async def search(
        self,
        session_id: str | None,
        query: str,
        *,
        k: int | None = None,
        platform: str | None = None,
        narrow: str | None = None,
        exclude: Collection[str] = (),
        min_score: float | None = None,
    ) -> list[RecallHit]:
        """The search behind ``recall``; ``session_id`` None searches every session (the
        operator's ``aalis vector search``), ``exclude`` leaves out the messages (by the
        key of their vector, ``key_of``) the caller already has."""
        # The fusion and the re-ranking are imported by the first search, not at the plugin's
        # start (their patterns take milliseconds to compile; docs/performance.md).
        from aalis_plugin_memory_vector._fusion import VECTOR, fuse

        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if k is None:
            k = self._config.k
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a non-negative int, got {k!r}")
        if k == 0 or not query.strip():
            return []
        embedder, store = self._ready()
        model_id = str(embedder.model_id)
        if session_id is None:
            where = ScopeFilter(model_id=model_id, session_ids=None, roles=frozenset(INDEXED_ROLES))
        else:
            where = await self.scope(session_id, model_id, platform=platform, narrow=narrow)
        try:
            async with asyncio.timeout(self._config.embed_timeout_s):
                vector = await embedder.embed_query(clip(query, self._config.max_text_chars))
        except TimeoutError:
            raise RecallUnavailable(
                f"the embedder did not answer within {self._config.embed_timeout_s:g} s"
            ) from None
        excluded = set(exclude)
        lexical = self._lexical_leg(store)
        depth = self._rerank_depth(embedder, query)
        hits: list[RecallHit] = []
        want = k + len(excluded)
        for _ in range(4):  # a retry only when checked-out hits left fewer than k
            found: list[VectorHit] = sorted(
                await store.search(vector, max(want, depth), where),
                key=lambda hit: (-hit.score, -hit.timestamp),
            )
            if depth:
                found = await self._reranked(embedder, store, where, vector, found, depth)
            words = await self._lexical(lexical, query, want, where)
            ranked = fuse(found, words or [], query)
            current = await self._checked(store, [f.hit for f in ranked])
            hits = []
            for fused in ranked:
                hit = fused.hit
                if hit.message_id in excluded:
                    continue
                # a cosine floor says nothing about a hit the words found
                if min_score is not None and fused.source == VECTOR and hit.score < min_score:
                    continue
                message = current.get(hit.message_id) if current is not None else None
                if current is not None and message is None:
                    continue  # gone from the store, or stale: never shown
                score = fused.score if words is not None else hit.score
                hits.append(await self._with_neighbours(hit, message, score, fused.source))
                if len(hits) >= k:
                    break
            dropped = len(ranked) - len(current) if current is not None else 0
            more = len(found) >= want or (words is not None and len(words) >= want)
            if len(hits) >= k or not more or not dropped:
                break
            want *= 2
        return hits

    def _rerank_depth(self, embedder: Any, query: str) -> int:
        """How many vector candidates to re-rank: none for a lexical embedder (its query
        and document vectors are the same), nor for a query naming an identifier or a
        proper name (the lexical leg decides those: docs/host/recall.md, "Re-ranking")."""
        from aalis_plugin_memory_vector._fusion import identifiers
        from aalis_plugin_memory_vector._rerank import mixes_scripts, names_someone

        depth = self._config.rerank_depth
        if (
            not depth
            or embedder_kind(embedder) != SEMANTIC
            or identifiers(query)
            or names_someone(query)
            or mixes_scripts(query)
        ):
            return 0
        return depth

    async def _reranked(
        self,
        embedder: Any,
        store: Any,
        where: ScopeFilter,
        query: list[float],
        found: list[VectorHit],
        depth: int,
    ) -> list[VectorHit]:
        """``found`` with its best ``depth`` re-ranked (``_rerank.py``); as found when the
        embedder fails or is too slow (the recall goes on, the log says why). Each
        candidate's density is asked of the store with its query vector, within ``where``:
        the recall's own scope, so a hub is judged among what this recall can see."""
        from aalis_plugin_memory_vector._rerank import DENSITY_NEIGHBOURS, density, rerank

        head, tail = found[:depth], found[depth:]
        if len(head) < 2:
            return found
        limit = self._config.max_text_chars
        try:
            async with asyncio.timeout(self._config.embed_timeout_s):
                as_queries = await embed_queries(embedder, [clip(h.text, limit) for h in head])
        except Exception as exc:
            self._logger.warning(
                "re-ranking skipped: the embedder failed", error=f"{type(exc).__name__}: {exc}"
            )
            return found
        densities: list[float] | None
        try:
            densities = [
                density(hit.message_id, await store.search(as_query, DENSITY_NEIGHBOURS + 1, where))
                for hit, as_query in zip(head, as_queries, strict=True)
            ]
        except Exception as exc:
            self._logger.warning(
                "re-ranking without densities: the store failed",
                error=f"{type(exc).__name__}: {exc}",
            )
            densities = None
        return [r.hit for r in rerank(head, query, as_queries, densities=densities)] + tail

    @staticmethod
    def _lexical_leg(store: Any) -> Any:
        """The store's lexical search, when it offers the optional ``LexicalSearch`` group
        (docs/host/recall.md, "Fusion")."""
        return store.lexical_search if isinstance(store, LexicalSearch) else None

    async def _lexical(
        self, method: Any, query: str, k: int, where: ScopeFilter
    ) -> list[VectorHit] | None:
        """The lexical leg's hits, best first; None when the store has no such leg or it
        failed (the recall goes on with the vectors alone, and says so in the log)."""
        if method is None:
            return None
        try:
            found: list[VectorHit] = list(
                await method(clip(query, self._config.max_text_chars), k, where)
            )
        except Exception as exc:
            self._logger.warning(
                "lexical search failed; recalling by vectors alone",
                error=f"{type(exc).__name__}: {exc}",
            )
            return None
        # The scope is the store's to apply; a new leg of a third-party store is checked
        # again here, since one hit outside it would be another person's memory.
        inside = [
            hit
            for hit in found
            if where.matches(
                session_id=hit.session_id,
                role=hit.role,
                model_id=hit.model_id,
                platform=hit.platform,
                user_id=hit.user_id,
            )
        ]
        if len(inside) < len(found):
            self._logger.error(
                "the lexical search returned hits outside the scope; they are not shown",
                outside=len(found) - len(inside),
            )
        inside.sort(key=lambda hit: (-hit.score, -hit.timestamp))
        return inside

    async def _checked(self, store: Any, hits: list[VectorHit]) -> dict[str, Message] | None:
        """The store's current message of every hit that may be shown (docs/recall.md,
        "Identity and the recall check"): a hit whose message is gone loses its vector
        (an orphan, e.g. cleared by another process); a hit whose text is no longer the
        message's (rewritten) loses its vector and is queued again with the current text.
        None when the store cannot be asked (hits are then shown as stored)."""
        try:
            current = await self._indexer.view.lookup(
                [Wanted(h.message_id, h.session_id, h.timestamp) for h in hits]
            )
        except Exception as exc:  # unverified text is never shown
            raise RecallUnavailable(
                f"the message store could not confirm the hits: {type(exc).__name__}: {exc}"
            ) from exc
        if current is None:
            return None
        limit = self._config.max_text_chars
        shown: dict[str, Message] = {}
        doomed: dict[str, list[str]] = {}
        stale: dict[str, list[Message]] = {}
        for hit in hits:
            message = current.get(hit.message_id)
            if message is not None and indexable(message):
                if clip(message.content or "", limit) == hit.text:
                    shown[hit.message_id] = message
                    continue
                stale.setdefault(hit.session_id, []).append(message)
            doomed.setdefault(hit.session_id, []).append(hit.message_id)
        for session_id, ids in doomed.items():
            try:
                await store.delete(session_id, ids)
            except Exception as exc:
                self._logger.warning("orphaned vectors not deleted", error=str(exc))
        for session_id, messages in stale.items():
            await self._indexer.submit(session_id, messages)
        if doomed:
            self._logger.info(
                "recall dropped vectors the message store no longer backs",
                orphaned=sum(len(v) for v in doomed.values()) - sum(len(v) for v in stale.values()),
                stale=sum(len(v) for v in stale.values()),
            )
        return shown

    async def _with_neighbours(
        self, hit: VectorHit, message: Message | None, score: float, source: str
    ) -> RecallHit:
        shown = message or Message(
            role=hit.role,
            content=hit.text,
            timestamp=hit.timestamp,
            metadata={"platform": hit.platform} if hit.platform is not None else None,
            id=None if hit.message_id.startswith("~") else hit.message_id,
        )
        score = score if math.isfinite(score) else 0.0
        around: list[Message] = []
        if self._memory.present and self._config.neighbours > 0:
            window = self._config.neighbour_window_ms
            try:
                around = await self._indexer.read_span(
                    hit.session_id, hit.timestamp - window, hit.timestamp + window
                )
            except Exception as exc:
                self._logger.warning("neighbours unreadable", error=str(exc))
        conversation = [m for m in around if indexable(m)]
        at = next(
            (i for i, m in enumerate(conversation) if key_of(hit.session_id, m) == hit.message_id),
            None,
        )
        if at is None:
            return RecallHit(session_id=hit.session_id, message=shown, score=score, source=source)
        n = self._config.neighbours
        neighbours = (*conversation[max(0, at - n) : at], *conversation[at + 1 : at + 1 + n])
        return RecallHit(
            session_id=hit.session_id,
            message=conversation[at],
            score=score,
            neighbours=tuple(neighbours),
            source=source,
        )


__all__ = ["VectorRecall"]
