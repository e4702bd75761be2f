"""The indexer: saved messages into vectors, through a bounded queue, never losing one.

``submit`` (from ``memory_messages_saved``) only queues: a turn never waits for an embedder.
A worker takes a batch, **marks** it in the memory store's metadata (one commit; see
``gaps.py``), embeds, upserts, then **re-checks** the batch against the message store by
id and deletes the vectors of messages that were removed (or rewritten) meanwhile — by
this process or by any other — and only then removes the mark. So a ``kill -9`` at any
instant leaves either the vectors or a mark that the next host backfills, and a clear that
ran in another process while this one embedded is never undone (docs/recall.md).

Vectors are keyed on message ids (``key_of``): two messages of one millisecond are two
vectors. When the queue is full, or the embedder or store fails or is absent, a gap is
recorded and backfilled from the message store.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

import attrs
from aalis_api_memory import CrossSession, FullHistory, MemoryService, supports
from aalis_api_vectorstore import DroppedSessions, VectorRecord
from aalis_schema_message import Message

from aalis_plugin_memory_vector._config import MemoryVectorConfig
from aalis_plugin_memory_vector._gaps import GapBook
from aalis_plugin_memory_vector._liveness import ProcessMark
from aalis_plugin_memory_vector._text import clip, indexable, key_of, metadata_str
from aalis_plugin_memory_vector._verify import StoreView, Wanted

if TYPE_CHECKING:
    from aalis_core import Handle

Key = str  # the key of a vector: the message id (see ``key_of``)

#: False in commands that only look (``aalis vector status|check``): their host must not
#: start backfilling under the figures it is about to print.
BACKFILL_AT_START: ContextVar[bool] = ContextVar("memory_vector_backfill_at_start", default=True)
#: Test hook: seconds the worker sleeps after marking a batch and before embedding it,
#: so a test can kill or race a writer at that instant. Never set in production.
DELAY_ENV = "AALIS_MEMORY_VECTOR_TEST_EMBED_DELAY_S"
#: Test hook: seconds ``submit`` sleeps before queueing, the instant after a save and before
#: its batch is marked (only the process mark covers it; ``liveness.py``).
SUBMIT_DELAY_ENV = "AALIS_MEMORY_VECTOR_TEST_SUBMIT_DELAY_S"


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
        self.view = StoreView(memory, logger)
        self._queue: asyncio.Queue[Key] = asyncio.Queue(maxsize=config.queue_size)
        self._pending: dict[Key, tuple[str, Message]] = {}
        self._lock = asyncio.Lock()
        self._busy = 0
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._backfilled = asyncio.Event()
        self._backfilled.set()
        self._worker: asyncio.Task[None] | None = None
        #: Marks of finished batches, deleted with the next batch's mark (one commit per
        #: batch in a burst) or when the worker is idle.
        self._finished_marks: list[str] = []
        self._delay = float(os.environ.get(DELAY_ENV) or 0.0)
        self._submit_delay = float(os.environ.get(SUBMIT_DELAY_ENV) or 0.0)
        self.process = ProcessMark(
            memory, self.gaps, logger, idle=lambda: not (self._unfinished() or self._busy)
        )
        #: user_id last seen per session (the ``user`` scope reads it).
        self.user_ids: dict[str, str] = {}

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.gaps.load()
        await self._adopt_dropped_sessions()
        await self.process.start()  # dead processes' marks become gaps, backfilled below
        at_start = BACKFILL_AT_START.get()
        if at_start:
            self._backfilled.clear()
        self._worker = asyncio.create_task(self._run(at_start), name="memory-vector indexer")

    async def _adopt_dropped_sessions(self) -> None:
        """Record the sessions a store migration dropped as gaps, then tell the store."""
        if not (self._store.present and self._memory.present):
            return
        # Looked up by name: the handle's proxy hides the store's class from isinstance.
        store = cast(DroppedSessions, self._store.use)
        if getattr(store, "dropped_sessions", None) is None:
            return
        if getattr(store, "acknowledge_dropped", None) is None:
            return
        try:
            sessions = await store.dropped_sessions()
            for session_id in sessions:
                await self.gaps.record(
                    session_id, [], "vectors from before message identity were dropped", whole=True
                )
            if sessions:
                await store.acknowledge_dropped(sessions)
        except Exception as exc:
            self._logger.error("dropped sessions not recorded as gaps", error=str(exc))

    async def stop(self, drain_s: float = 5.0) -> None:
        """Index what is queued (for at most ``drain_s``), record the rest as gaps."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + drain_s
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settle_forever(), drain_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._backfilled.wait(), max(0.0, deadline - loop.time()))
        with contextlib.suppress(Exception):
            await self.flush_marks()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker
        leftover: dict[str, list[int]] = {}
        for session_id, message in self._pending.values():
            if message.timestamp is not None:
                leftover.setdefault(session_id, []).append(message.timestamp)
        self._pending.clear()
        recorded = True
        for session_id, timestamps in leftover.items():
            reason = "the host stopped before indexing"
            recorded = await self.gaps.record(session_id, timestamps, reason) and recorded
        if recorded:  # else the process mark stays, and the next host treats us as dead
            await self.process.stop()

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
        if self._submit_delay:
            await asyncio.sleep(self._submit_delay)
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
                self._pending[key] = (session_id, message)  # the newer version wins
                continue
            try:
                self._queue.put_nowait(key)
            except asyncio.QueueFull:
                overflow.append(message.timestamp)
                continue
            self._pending[key] = (session_id, message)
            self._wakeup.set()
        if overflow:
            await self.gaps.record(session_id, overflow, "the indexing queue was full")
        if missing:
            await self.gaps.record(session_id, missing, "no embedder or vector store is active")

    # -- the worker -------------------------------------------------------------------------

    async def _run(self, backfill_first: bool) -> None:
        retry = self._config.backfill_retry_s
        if backfill_first:
            try:
                await self.backfill()
            except Exception as exc:
                self._logger.error("backfill at start failed", error=str(exc), exc_info=exc)
            finally:
                self._backfilled.set()
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
                    self._maybe_idle()
                if self._queue.empty():
                    await self.flush_marks()
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
        items = [(key, *self._pending[key]) for key in dict.fromkeys(keys) if key in self._pending]
        if not items:
            return IndexOutcome(0)
        indexed = 0
        marks: dict[str, str] = {}
        try:
            embedder = self._embedding.use
            store = self._store.use
            spans: dict[str, list[int]] = {}
            for _, sid, message in items:
                assert message.timestamp is not None
                spans.setdefault(sid, []).append(message.timestamp)
            finished, self._finished_marks = self._finished_marks, []
            try:
                marks = await self.gaps.mark(spans, unmark=finished)
            except BaseException:
                self._finished_marks.extend(finished)
                raise
            if self._delay > 0:
                await asyncio.sleep(self._delay)
            texts = [clip(m.content or "", self._config.max_text_chars) for _, _, m in items]
            async with asyncio.timeout(self._config.embed_timeout_s):
                vectors = await embedder.embed_documents(texts)
            if len(vectors) != len(items):
                raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(items)}")
            model_id = str(embedder.model_id)
            async with self._lock:
                records: list[VectorRecord] = []
                for (key, sid, message), text, vector in zip(items, texts, vectors, strict=True):
                    if self._pending.get(key) != (sid, message):
                        continue  # deleted or rewritten while it was being embedded
                    assert message.timestamp is not None
                    records.append(
                        VectorRecord(
                            message_id=key,
                            session_id=sid,
                            timestamp=message.timestamp,
                            role=message.role,
                            model_id=model_id,
                            text=text,
                            vector=vector,
                            platform=metadata_str(message, "platform"),
                            user_id=metadata_str(message, "user_id"),
                        )
                    )
                if records:
                    await store.upsert(records)
                for record in records:
                    self._pending.pop(record.message_id, None)
                indexed = len(records) - await self._recheck(store, records)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            failed: dict[str, list[int]] = {}
            for key, sid, message in items:
                if self._pending.get(key) == (sid, message):
                    self._pending.pop(key)
                    assert message.timestamp is not None
                    failed.setdefault(sid, []).append(message.timestamp)
            for session_id, timestamps in failed.items():
                await self.gaps.record(session_id, timestamps, f"indexing failed: {error}")
            self._finished_marks.extend(marks.values())
            return IndexOutcome(0, error)
        self._finished_marks.extend(marks.values())
        # A message rewritten while its batch was embedded is still pending: queue it again.
        for key, sid, message in items:
            pending = self._pending.get(key)
            if pending is not None and pending != (sid, message):
                self._requeue(key)
        return IndexOutcome(indexed)

    async def flush_marks(self) -> None:
        """Delete the marks of finished batches (the worker does it when idle)."""
        finished, self._finished_marks = self._finished_marks, []
        if finished:
            await self.gaps.unmark(finished)

    def _requeue(self, key: Key) -> None:
        try:
            self._queue.put_nowait(key)
            self._wakeup.set()
        except asyncio.QueueFull:
            sid, _ = self._pending.pop(key)
            self._logger.warning("re-index queue full; left to the index check", session_id=sid)

    async def _recheck(self, store: Any, records: Sequence[VectorRecord]) -> int:
        """After an upsert: delete the vectors whose message is gone from the store, or
        whose text changed, meanwhile (here or in another process); a changed one is
        queued again with its current text. Returns how many vectors were removed."""
        if not records:
            return 0
        current = await self.view.lookup(
            [Wanted(r.message_id, r.session_id, r.timestamp) for r in records]
        )
        if current is None:
            return 0
        doomed: dict[str, list[str]] = {}
        for record in records:
            message = current.get(record.message_id)
            if message is not None and indexable(message):
                if clip(message.content or "", self._config.max_text_chars) == record.text:
                    continue
                self._pending[record.message_id] = (record.session_id, message)
                self._requeue(record.message_id)
            doomed.setdefault(record.session_id, []).append(record.message_id)
        removed = 0
        for session_id, ids in doomed.items():
            removed += int(await store.delete(session_id, ids))
        return removed

    async def index_now(self, session_id: str, messages: Iterable[Message]) -> IndexOutcome:
        """Embed and store the indexable ``messages`` now (backfill, reindex, rewrite)."""
        keys: list[Key] = []
        for message in messages:
            if indexable(message):
                key = key_of(session_id, message)
                self._pending[key] = (session_id, message)
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
                    pending = self._pending.pop(key, None)
                    if pending is not None and pending[1].timestamp is not None:
                        rest.setdefault(pending[0], []).append(pending[1].timestamp)
                for sid, timestamps in rest.items():
                    await self.gaps.record(sid, timestamps, f"indexing failed: {outcome.error}")
                await self.flush_marks()
                return IndexOutcome(total, outcome.error)
            total += outcome.indexed
        await self.flush_marks()
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
        seen: set[str] = set()
        cursor = low
        while cursor <= high:
            page = await memory.get_messages_by_session_range(session_id, cursor, high)
            if not page:
                break
            fresh = [m for m in page if key_of(session_id, m) not in seen]
            found.extend(fresh)
            seen.update(key_of(session_id, m) for m in fresh)
            last = max(m.timestamp for m in page if m.timestamp is not None)
            # A full page may end inside a millisecond that holds more messages: the next
            # read starts at that millisecond again (what was seen is skipped), and moves
            # past it once it brings nothing new.
            cursor = last if fresh and last > cursor else max(cursor, last) + 1
        found.sort(key=lambda m: m.timestamp or 0)
        return found

    async def read_session(self, session_id: str) -> list[Message]:
        """Every message of the session, archived included."""
        memory = self._memory.use
        if supports(memory, FullHistory, "get_full_history"):
            return list(await memory.get_full_history(session_id, float("inf")))
        return await self.read_span(session_id, -(2**63), 2**63 - 1)

    async def backfill(self, *, force: bool = False) -> int:
        """Index the recorded gaps that are due; returns how many messages were indexed."""
        if not (self._embedding.present and self._store.present and self._memory.present):
            return 0
        total = 0
        for session_id, gap in self.gaps.due(self._config.backfill_retry_s, force=force):
            version = gap.version
            try:
                if gap.whole:
                    messages = await self.read_session(session_id)
                else:
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

    async def forget(
        self, session_id: str, timestamps: Sequence[int], ids: Sequence[str] = ()
    ) -> int:
        """Delete the vectors (and pending messages) of these messages: by id, or by
        timestamp for an event from a store without identity (``ids`` empty)."""
        wanted_ids = {i for i in ids if isinstance(i, str)}
        wanted_ts = {t for t in timestamps if isinstance(t, int) and not isinstance(t, bool)}
        async with self._lock:
            for key, (sid, message) in list(self._pending.items()):
                if sid != session_id:
                    continue
                if key in wanted_ids or (not wanted_ids and message.timestamp in wanted_ts):
                    del self._pending[key]
            if not self._store.present:
                return 0
            store = self._store.use
            if wanted_ids:
                deleted: int = await store.delete(session_id, sorted(wanted_ids))
            elif wanted_ts:
                deleted = await store.delete(session_id, timestamps=sorted(wanted_ts))
            else:
                return 0
            return deleted

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> int:
        """Replace the vectors of rewritten messages; only what had a vector (or was about
        to get one) is indexed again. Returns how many were re-indexed."""
        stamped = [m for m in messages if isinstance(m, Message) and m.timestamp is not None]
        keys = sorted({key_of(session_id, m) for m in stamped})
        if not keys:
            return 0
        async with self._lock:
            for message in stamped:
                key = key_of(session_id, message)
                if key in self._pending:  # not stored yet: the queued version is replaced
                    if indexable(message):
                        self._pending[key] = (session_id, message)
                    else:
                        del self._pending[key]
            deleted = 0
            if self._store.present:
                deleted = await self._store.use.delete(session_id, keys)
        if not deleted:
            return 0
        outcome = await self.index_now(session_id, stamped)
        if outcome.error is not None:
            raise RuntimeError(f"re-indexing the rewritten messages failed: {outcome.error}")
        return outcome.indexed

    async def clear(self, session_id: str | None, before: str | None = None) -> int:
        """Delete every vector of a session (or of all sessions), pending ones and gaps too
        (the gaps recorded before ``before``, an entry id taken when the clear began)."""
        async with self._lock:
            for key in [k for k, v in self._pending.items() if session_id in (None, v[0])]:
                del self._pending[key]
            store = self._store.use
            deleted: int = (
                await store.delete_all() if session_id is None else await store.delete(session_id)
            )
        await self.gaps.drop(session_id, before)
        return deleted


__all__ = ["BACKFILL_AT_START", "DELAY_ENV", "SUBMIT_DELAY_ENV", "IndexOutcome", "Indexer", "Key"]
