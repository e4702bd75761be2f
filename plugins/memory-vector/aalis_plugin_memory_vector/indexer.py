"""The indexer: saved messages into vectors, through a bounded queue, never losing one.

``submit`` (from ``memory_messages_saved``) only queues: a turn never waits for an embedder.
A worker embeds in batches and upserts. Deletes and rewrites take the same lock as the
upsert, and a message is upserted only if it is still the pending version of its key after
embedding, so an undo or an edit that lands while a batch is being embedded is never undone
by that batch. When the queue is full, or the embedder or store fails or is absent, the
span is recorded as a gap (see ``gaps.py``) and backfilled from the message store.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
from aalis_api_memory import CrossSession, FullHistory, MemoryService, supports
from aalis_api_vectorstore import VectorRecord
from aalis_schema_message import Message

from aalis_plugin_memory_vector.config import MemoryVectorConfig
from aalis_plugin_memory_vector.gaps import GapBook
from aalis_plugin_memory_vector.text import clip, indexable, metadata_str

if TYPE_CHECKING:
    from aalis_core.handles import Handle

Key = tuple[str, int, str]  # (session_id, timestamp, role): the key of a vector


def key_of(session_id: str, message: Message) -> Key:
    assert message.timestamp is not None
    return (session_id, message.timestamp, message.role)


@attrs.frozen
class IndexOutcome:
    indexed: int
    error: str | None = None


class Indexer:
    """Owns the queue, the pending messages and the gaps of one plugin instance."""

    def __init__(
        self,
        *,
        embedding: Any,
        vectorstore: Any,
        memory: Handle[MemoryService],
        config: MemoryVectorConfig,
        logger: Any,
    ) -> None:
        self._embedding = embedding
        self._store = vectorstore
        self._memory = memory
        self._config = config
        self._logger = logger
        self.gaps = GapBook(memory, logger)
        self._queue: asyncio.Queue[Key] = asyncio.Queue(maxsize=config.queue_size)
        self._pending: dict[Key, Message] = {}
        self._lock = asyncio.Lock()
        self._busy = 0
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        #: user_id last seen per session (the ``user`` scope reads it).
        self.user_ids: dict[str, str] = {}

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.gaps.load()
        self._worker = asyncio.create_task(self._run(), name="memory-vector indexer")

    async def stop(self, drain_s: float = 5.0) -> None:
        """Index what is queued (for at most ``drain_s``), record the rest as gaps."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settle_forever(), drain_s)
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker
        leftover: dict[str, list[int]] = {}
        for session_id, timestamp, _ in self._pending:
            leftover.setdefault(session_id, []).append(timestamp)
        self._pending.clear()
        for session_id, timestamps in leftover.items():
            await self.gaps.record(session_id, timestamps, "the host stopped before indexing")

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    async def settle_forever(self) -> None:
        while self._unfinished() or self._busy:
            self._idle.clear()
            await self._idle.wait()

    async def settle(self, limit_s: float) -> bool:
        """Wait (at most ``limit_s``) until everything queued is indexed; True if it was."""
        if limit_s <= 0:
            return not (self._unfinished() or self._busy)
        try:
            await asyncio.wait_for(self.settle_forever(), limit_s)
        except TimeoutError:
            return False
        return True

    # -- intake -----------------------------------------------------------------------------

    async def submit(self, session_id: str, messages: Iterable[Message]) -> None:
        """Queue the indexable ones among ``messages``; a full queue records a gap."""
        overflow: list[int] = []
        missing: list[int] = []
        for message in messages:
            if not isinstance(message, Message) or not indexable(message):
                continue
            user_id = metadata_str(message, "user_id")
            if message.role == "user" and user_id is not None:
                self.user_ids[session_id] = user_id
            assert message.timestamp is not None
            if not (self._embedding.present and self._store.present):
                missing.append(message.timestamp)
                continue
            key = key_of(session_id, message)
            if key in self._pending:
                self._pending[key] = message  # the newer version wins; the key is queued
                continue
            try:
                self._queue.put_nowait(key)
            except asyncio.QueueFull:
                overflow.append(message.timestamp)
                continue
            self._pending[key] = message
            self._wakeup.set()
        if overflow:
            await self.gaps.record(session_id, overflow, "the indexing queue was full")
        if missing:
            await self.gaps.record(session_id, missing, "no embedder or vector store is active")

    # -- the worker -------------------------------------------------------------------------

    async def _run(self) -> None:
        retry = self._config.backfill_retry_s
        while True:
            try:
                # Wait for a key without taking it: while the key is on the queue, a
                # ``settle`` in another task sees it as unfinished.
                if self._queue.empty():
                    self._wakeup.clear()
                    try:
                        await asyncio.wait_for(self._wakeup.wait(), retry if retry > 0 else None)
                    except TimeoutError:
                        await self.backfill()
                        continue
                    if self._queue.empty():
                        continue
                keys: list[Key] = []
                while len(keys) < self._config.batch_size and not self._queue.empty():
                    keys.append(self._queue.get_nowait())
                self._busy += 1
                try:
                    await self._index_keys(keys)
                finally:
                    self._busy -= 1
                if self._queue.empty():
                    await self.backfill()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the worker must outlive any one failure
                self._logger.error("indexer step failed", error=str(exc), exc_info=exc)
            finally:
                self._maybe_idle()

    def _unfinished(self) -> int:
        """Keys waiting on the queue. The worker takes keys off it and counts itself busy
        in one step (no await in between), so a key is always one or the other."""
        return self._queue.qsize()

    def _maybe_idle(self) -> None:
        if not (self._unfinished() or self._busy):
            self._idle.set()

    async def _index_keys(self, keys: Sequence[Key]) -> IndexOutcome:
        items = [(key, self._pending[key]) for key in dict.fromkeys(keys) if key in self._pending]
        if not items:
            return IndexOutcome(0)
        error: str | None = None
        indexed = 0
        try:
            embedder = self._embedding.use
            store = self._store.use
            texts = [
                clip(message.content or "", self._config.max_text_chars) for _, message in items
            ]
            async with asyncio.timeout(self._config.embed_timeout_s):
                vectors = await embedder.embed_documents(texts)
            if len(vectors) != len(items):
                raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(items)}")
            model_id = str(embedder.model_id)
            async with self._lock:
                records: list[VectorRecord] = []
                done: list[Key] = []
                for (key, message), text, vector in zip(items, texts, vectors, strict=True):
                    if self._pending.get(key) is not message:
                        continue  # deleted or rewritten while it was being embedded
                    records.append(
                        VectorRecord(
                            session_id=key[0],
                            timestamp=key[1],
                            role=key[2],
                            model_id=model_id,
                            text=text,
                            vector=vector,
                            platform=metadata_str(message, "platform"),
                            user_id=metadata_str(message, "user_id"),
                        )
                    )
                    done.append(key)
                if records:
                    await store.upsert(records)
                for key in done:
                    self._pending.pop(key, None)
                indexed = len(records)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            failed: dict[str, list[int]] = {}
            for key, message in items:
                if self._pending.get(key) is message:
                    self._pending.pop(key)
                    failed.setdefault(key[0], []).append(key[1])
            for session_id, timestamps in failed.items():
                await self.gaps.record(session_id, timestamps, f"indexing failed: {error}")
            return IndexOutcome(0, error)
        # A message rewritten while its batch was embedded is still pending: queue it again.
        for key, message in items:
            pending = self._pending.get(key)
            if pending is not None and pending is not message:
                try:
                    self._queue.put_nowait(key)
                    self._wakeup.set()
                except asyncio.QueueFull:
                    self._pending.pop(key)
                    await self.gaps.record(key[0], [key[1]], "the indexing queue was full")
        return IndexOutcome(indexed)

    async def index_now(self, session_id: str, messages: Iterable[Message]) -> IndexOutcome:
        """Embed and store the indexable ``messages`` now (backfill, reindex, rewrite)."""
        keys: list[Key] = []
        for message in messages:
            if indexable(message):
                key = key_of(session_id, message)
                self._pending[key] = message
                keys.append(key)
        total = 0
        size = self._config.batch_size
        for start in range(0, len(keys), size):
            self._busy += 1
            try:
                outcome = await self._index_keys(keys[start : start + size])
            finally:
                self._busy -= 1
                self._maybe_idle()
            if outcome.error is not None:
                rest: dict[str, list[int]] = {}
                for key in keys[start + size :]:
                    if self._pending.pop(key, None) is not None:
                        rest.setdefault(key[0], []).append(key[1])
                for sid, timestamps in rest.items():
                    await self.gaps.record(sid, timestamps, f"indexing failed: {outcome.error}")
                return IndexOutcome(total, outcome.error)
            total += outcome.indexed
        return IndexOutcome(total)

    # -- backfill ---------------------------------------------------------------------------

    async def read_span(self, session_id: str, low: int, high: int) -> list[Message]:
        """Every message of ``session_id`` from ``low`` to ``high`` (archived included)."""
        memory = self._memory.use
        if not supports(memory, CrossSession, "get_messages_by_session_range"):
            # Without range queries, the whole history (AttributeError if that is missing too).
            full = await cast(FullHistory, memory).get_full_history(session_id, float("inf"))
            return [m for m in full if m.timestamp is not None and low <= m.timestamp <= high]
        found: list[Message] = []
        cursor = low
        while cursor <= high:
            page = await memory.get_messages_by_session_range(session_id, cursor, high)
            if not page:
                break
            found.extend(page)
            last = max(m.timestamp for m in page if m.timestamp is not None)
            if last < cursor:
                break
            cursor = last + 1
        return found

    async def backfill(self, *, force: bool = False) -> int:
        """Index the recorded gaps that are due; returns how many messages were indexed."""
        if not (self._embedding.present and self._store.present and self._memory.present):
            return 0
        total = 0
        for session_id, gap in self.gaps.due(self._config.backfill_retry_s, force=force):
            version = gap.version
            try:
                messages = await self.read_span(session_id, gap.from_ts, gap.to_ts)
                outcome = await self.index_now(session_id, messages)
            except Exception as exc:
                outcome = IndexOutcome(0, f"{type(exc).__name__}: {exc}")
            if outcome.error is None:
                total += outcome.indexed
                await self.gaps.resolve(session_id, version)
                self._logger.info(
                    "index gap backfilled", session_id=session_id, indexed=outcome.indexed
                )
            else:
                self.gaps.attempted(session_id, f"backfill failed: {outcome.error}")
        return total

    # -- changes ----------------------------------------------------------------------------

    async def forget(self, session_id: str, timestamps: Sequence[int]) -> int:
        """Delete the vectors (and pending messages) of ``session_id`` at ``timestamps``."""
        wanted = {t for t in timestamps if isinstance(t, int) and not isinstance(t, bool)}
        async with self._lock:
            for key in [k for k in self._pending if k[0] == session_id and k[1] in wanted]:
                del self._pending[key]
            if not wanted or not self._store.present:
                return 0
            deleted: int = await self._store.use.delete(session_id, sorted(wanted))
            return deleted

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> int:
        """Replace the vectors of rewritten messages; only what had a vector (or was about
        to get one) is indexed again. Returns how many were re-indexed."""
        stamped = [m for m in messages if isinstance(m, Message) and m.timestamp is not None]
        timestamps = sorted({m.timestamp for m in stamped if m.timestamp is not None})
        if not timestamps:
            return 0
        async with self._lock:
            for message in stamped:
                key = key_of(session_id, message)
                if key in self._pending:  # not stored yet: the queued version is replaced
                    if indexable(message):
                        self._pending[key] = message
                    else:
                        del self._pending[key]
            deleted = 0
            if self._store.present:
                deleted = await self._store.use.delete(session_id, timestamps)
        if not deleted:
            return 0
        outcome = await self.index_now(session_id, stamped)
        if outcome.error is not None:
            raise RuntimeError(f"re-indexing the rewritten messages failed: {outcome.error}")
        return outcome.indexed

    async def clear(self, session_id: str | None) -> int:
        """Delete every vector of a session (or of all sessions), pending ones and gaps too."""
        async with self._lock:
            for key in [k for k in self._pending if session_id is None or k[0] == session_id]:
                del self._pending[key]
            store = self._store.use
            deleted: int = (
                await store.delete_all() if session_id is None else await store.delete(session_id)
            )
        await self.gaps.drop(session_id)
        return deleted


__all__ = ["IndexOutcome", "Indexer", "Key", "key_of"]
