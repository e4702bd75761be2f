"""The deriver: saved messages into facts, off the hot path, never losing a message.

``submit`` (from ``memory_messages_saved``) only queues: a turn never waits for extraction.
A worker reads batches, extracts, consolidates and writes each batch in ONE commit, then
records how far it read each session (``user-relation.progress``). What it could not read —
the queue was full, the store failed, the host stopped or was killed before the queue
drained — is found again: a full queue or a failure records a gap (``user-relation.gaps``),
and at start every session whose last message is newer than its progress mark is read
again from the message store (the source of truth), so even a ``kill -9`` loses nothing.
Reading a message twice changes nothing (consolidation ignores a source it already holds).

Deletions and rewrites take the same lock as a batch: a message deleted while queued is
never read, a rewritten one is read in its new version, and the facts whose every source
went are retracted (the fact they superseded is current again) or re-derived.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from aalis_api_memory import CrossSession, Person, Transfer, person_of, supports
from aalis_api_relation import Fact, PersonRef, Statement, consolidate, drop_sources
from aalis_schema_message import Message

from aalis_plugin_user_relation._config import UserRelationConfig
from aalis_plugin_user_relation._drafts import Draft
from aalis_plugin_user_relation._llm_extractor import (
    CONFIDENCE as LLM_CONFIDENCE,
    EXTRACTOR as LLM_EXTRACTOR,
    LlmExtractor,
)
from aalis_plugin_user_relation._store import GAPS_NAMESPACE, FactStore

#: message id -> what a model read in it (the offline extractor reads the rest)
Labelled = dict[str, list[Draft]]


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def readable(message: Message) -> bool:
    """A user message with text, a person and an id: the only kind a fact comes from."""
    return (
        isinstance(message, Message)
        and message.role == "user"
        and bool(message.id)
        and message.timestamp is not None
        and isinstance(message.content, str)
        and bool(message.content.strip())
        and person_of(message) is not None
    )


def statements(
    session_id: str, message: Message, drafts: list[Draft] | None = None
) -> list[Statement]:
    """What was read in one message, as statements of its speaker: ``drafts`` (a model's
    reading) when given, else the offline extractor's."""
    person = person_of(message)
    if person is None or not isinstance(message.content, str) or message.timestamp is None:
        return []
    who = PersonRef(person.platform, person.user_id)
    text = " ".join(message.content.split())[:300]
    # The offline rules are imported at the first message read, not at the plugin's start
    # (their tables take milliseconds to build; most commands read no message).
    from aalis_plugin_user_relation._extractor import CONFIDENCE, EXTRACTOR, extract

    extractor, confidence = (
        (EXTRACTOR, CONFIDENCE) if drafts is None else (LLM_EXTRACTOR, LLM_CONFIDENCE)
    )
    read = extract(message.content) if drafts is None else drafts
    return [
        Statement(
            person=who,
            attribute=draft.attribute,
            value=draft.value,
            text=text,
            at=message.timestamp,
            source=message.id,
            session_id=session_id,
            extractor=extractor,
            confidence=confidence,
            corrects=draft.corrects,
        )
        for draft in read
    ]


def apply(
    facts: dict[str, Fact],
    session_id: str,
    messages: Iterable[Message],
    labelled: Labelled | None = None,
) -> set[str]:
    """Consolidate ``messages`` into ``facts`` (in place); returns the ids changed."""
    changed: set[str] = set()
    for message in messages:
        drafts = (labelled or {}).get(message.id or "")
        for statement in statements(session_id, message, drafts):
            mine = [f for f in facts.values() if f.person == statement.person]
            for fact in consolidate(mine, statement, new_id):
                facts[fact.id] = fact
                changed.add(fact.id)
    return changed


class Deriver:
    """Owns the queue, the pending messages, the gaps and the progress marks."""

    def __init__(
        self,
        *,
        store: FactStore,
        config: UserRelationConfig,
        logger: Any,
        llm: LlmExtractor | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self._config = config
        self._logger = logger
        self.lock = asyncio.Lock()
        self._queue: asyncio.Queue[str] = asyncio.Queue(maxsize=config.queue_size)
        #: message id -> (session, the version to read)
        self._pending: dict[str, tuple[str, Message]] = {}
        self.gaps: dict[str, tuple[int, int, str]] = {}
        self._progress: dict[str, int] = {}
        #: Who spoke in each session, as far as it was read ("PLATFORM:USER_ID"): a session
        #: with two is a group, however long ago the other spoke.
        self.speakers: dict[str, set[str]] = {}
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        #: Sessions of the batch being read, and an event set after every batch.
        self._reading: set[str] = set()
        self._stepped = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._last_backfill = 0.0
        #: Counters for ``aalis facts status`` and the benchmark.
        self.read = 0
        self.dropped = 0

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self.store.present:
            try:
                await self._load()
            except Exception as exc:
                self._logger.error("fact progress unreadable", error=str(exc))
        self._worker = asyncio.create_task(self._run(), name="user-relation deriver")

    async def _load(self) -> None:
        memory = self.store.memory
        for entry in await memory.list_metadata(GAPS_NAMESPACE):
            low, high = entry.data.get("from_ts"), entry.data.get("to_ts")
            if isinstance(low, int) and isinstance(high, int) and low <= high:
                self.gaps[entry.key] = (low, high, str(entry.data.get("reason", "")))
        self._progress, self.speakers = await self.store.progress()
        if not supports(memory, Transfer, "list_sessions"):
            return
        # Sessions with messages newer than what was read: a process stopped (or was
        # killed) with messages still queued. Read them again.
        for info in await memory.list_sessions():
            last = info.last_timestamp
            if last is None:
                continue
            through = self._progress.get(info.session_id, -1)
            if last > through:
                self._merge_gap(info.session_id, through + 1, last, "not read before a stop")

    async def stop(self, drain_s: float = 5.0) -> None:
        """Read what is queued (for at most ``drain_s``), record the rest as gaps."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settle_forever(), drain_s)
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker
        left: dict[str, list[int]] = {}
        for sid, message in self._pending.values():
            assert message.timestamp is not None
            left.setdefault(sid, []).append(message.timestamp)
        self._pending.clear()
        for sid, stamps in left.items():
            await self.record_gap(sid, stamps, "the host stopped before reading")

    async def settle_forever(self) -> None:
        while self._queue.qsize() or self._busy:
            self._idle.clear()
            await self._idle.wait()

    async def settle(self, limit_s: float) -> bool:
        """Wait (at most ``limit_s``) until everything queued is read; True if it was."""
        if limit_s <= 0:
            return not (self._queue.qsize() or self._busy)
        try:
            await asyncio.wait_for(self.settle_forever(), limit_s)
        except TimeoutError:
            return False
        return True

    def _waiting_for(self, session_id: str) -> bool:
        return session_id in self._reading or any(
            sid == session_id for sid, _ in self._pending.values()
        )

    async def settle_session(self, session_id: str, limit_s: float) -> bool:
        """Wait (at most ``limit_s``) until the messages of ``session_id`` already handed over
        are read — not the rest of the queue, not a backfill: a turn never waits for other
        sessions' work. True if they were."""
        if limit_s <= 0:
            return not self._waiting_for(session_id)
        try:
            async with asyncio.timeout(limit_s):
                while self._waiting_for(session_id):
                    self._stepped.clear()
                    await self._stepped.wait()
        except TimeoutError:
            return False
        return True

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    # -- gaps -------------------------------------------------------------------------------

    def _merge_gap(self, sid: str, low: int, high: int, reason: str) -> tuple[int, int, str]:
        old = self.gaps.get(sid)
        gap = (low, high, reason) if old is None else (min(old[0], low), max(old[1], high), reason)
        self.gaps[sid] = gap
        return gap

    async def record_gap(self, sid: str, stamps: Sequence[int], reason: str) -> None:
        if not stamps:
            return
        low, high, why = self._merge_gap(sid, min(stamps), max(stamps), reason)
        self._logger.warning(
            "messages not read for facts; gap recorded",
            session_id=sid,
            count=len(stamps),
            reason=reason,
        )
        if not self.store.present:
            return
        try:
            await self.store.memory.save_metadata(
                GAPS_NAMESPACE, sid, {"from_ts": low, "to_ts": high, "reason": why}
            )
        except Exception as exc:  # the RAM copy still drives the backfill in this process
            self._logger.error("fact gap not persisted", session_id=sid, error=str(exc))

    async def _drop_gap(self, sid: str, gap: tuple[int, int, str]) -> None:
        if self.gaps.get(sid) != gap:
            return  # it grew while it was read: keep it
        del self.gaps[sid]
        with contextlib.suppress(Exception):
            await self.store.memory.delete_metadata(GAPS_NAMESPACE, sid)

    async def forget_gaps(self) -> None:
        self.gaps.clear()

    # -- intake -----------------------------------------------------------------------------

    async def submit(self, session_id: str, messages: Iterable[Message]) -> None:
        """Queue the readable ones among ``messages``; a full queue records a gap."""
        overflow: list[int] = []
        for message in messages:
            if not readable(message):
                continue
            assert message.id is not None
            assert message.timestamp is not None
            if message.id in self._pending:
                self._pending[message.id] = (session_id, message)
                continue
            try:
                self._queue.put_nowait(message.id)
            except asyncio.QueueFull:
                overflow.append(message.timestamp)
                self.dropped += 1
                continue
            self._pending[message.id] = (session_id, message)
        if overflow:
            await self.record_gap(session_id, overflow, "the fact queue was full")

    # -- the worker -------------------------------------------------------------------------

    async def _run(self) -> None:
        retry = self._config.backfill_retry_s
        while True:
            try:
                if self._queue.empty():
                    self._maybe_idle()
                    if self.gaps and time.monotonic() - self._last_backfill >= retry:
                        await self.backfill()
                        continue
                    first = await asyncio.wait_for(self._queue.get(), retry or None)
                    ids = [first]
                else:
                    ids = []
                self._busy += 1
                try:
                    while len(ids) < self._config.batch_size and not self._queue.empty():
                        ids.append(self._queue.get_nowait())
                    await self._read_ids(ids)
                finally:
                    self._busy -= 1
            except TimeoutError:
                continue
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the worker must outlive any one failure
                self._logger.error("fact step failed", error=str(exc), exc_info=exc)
            finally:
                self._maybe_idle()

    def _maybe_idle(self) -> None:
        if not (self._queue.qsize() or self._busy):
            self._idle.set()

    async def _read_ids(self, ids: Sequence[str]) -> None:
        items = [self._pending.pop(i) for i in dict.fromkeys(ids) if i in self._pending]
        if not items:
            return
        by_session: dict[str, list[Message]] = {}
        for sid, message in items:
            by_session.setdefault(sid, []).append(message)
        self._reading = set(by_session)
        try:
            labelled = await self.read_with_model([m for _, m in items])
            async with self.lock:
                await self.derive(by_session, labelled=labelled)
        except Exception as exc:
            for sid, messages in by_session.items():
                stamps = [m.timestamp for m in messages if m.timestamp is not None]
                await self.record_gap(sid, stamps, f"reading failed: {type(exc).__name__}: {exc}")
        finally:
            self._reading = set()
            self._stepped.set()

    async def read_with_model(self, messages: Sequence[Message]) -> Labelled:
        """One model call for the batch (outside the lock: a slow model never holds up a
        deletion); ``{}`` when there is no model or it failed (the offline rules read)."""
        if self.llm is None or not messages:
            return {}
        drafts = await self.llm.extract(messages)
        if drafts is None:
            return {}
        return {m.id: d for m, d in zip(messages, drafts, strict=True) if m.id}

    async def derive(
        self,
        by_session: dict[str, list[Message]],
        *,
        drop: Iterable[str] = (),
        labelled: Labelled | None = None,
    ) -> int:
        """Drop the message ids ``drop`` from every fact, then consolidate ``by_session``;
        ONE commit. Returns the facts written. The caller holds ``lock``."""
        facts = {f.id: f for f in await self.store.all()}
        deleted: list[Fact] = []
        changed: set[str] = set()
        gone = set(drop)
        if gone:
            removal = drop_sources(list(facts.values()), gone)
            for fact in removal.deleted:
                facts.pop(fact.id, None)
                deleted.append(fact)
            for fact in removal.changed:
                facts[fact.id] = fact
                changed.add(fact.id)
        progress: dict[str, int] = {}
        for sid, messages in by_session.items():
            ordered = sorted(messages, key=lambda m: (m.timestamp or 0, m.id or ""))
            changed |= apply(facts, sid, ordered, labelled)
            self.read += len(ordered)
            known = self.speakers.setdefault(sid, set())
            new = {str(p) for m in ordered if (p := person_of(m)) is not None} - known
            known |= new
            stamps = [m.timestamp for m in ordered if m.timestamp is not None]
            if stamps and max(stamps) > self._progress.get(sid, -1):
                self._progress[sid] = max(stamps)
            if sid in self._progress and (new or stamps):
                progress[sid] = self._progress[sid]
        await self.store.write([facts[i] for i in changed if i in facts], deleted)
        if progress:
            await self.store.save_progress(progress, self.speakers)
        return len(changed) + len(deleted)

    # -- backfill ---------------------------------------------------------------------------

    async def read_span(self, session_id: str, low: int, high: int) -> list[Message]:
        memory = self.store.memory
        if not supports(memory, CrossSession, "get_messages_by_session_range"):
            full = await memory.get_full_history(session_id, float("inf"))  # type: ignore[attr-defined]
            return [m for m in full if m.timestamp is not None and low <= m.timestamp <= high]
        found: list[Message] = []
        cursor = low
        while cursor <= high:
            page = await memory.get_messages_by_session_range(session_id, cursor, high, ["user"])
            if not page:
                break
            found.extend(page)
            last = max(m.timestamp for m in page if m.timestamp is not None)
            if last < cursor:
                break
            cursor = last + 1
        return found

    async def backfill(self) -> int:
        """Read every recorded gap again from the message store; returns messages read."""
        self._last_backfill = time.monotonic()
        if not self.store.present:
            return 0
        total = 0
        for sid, gap in list(self.gaps.items()):
            self._busy += 1
            try:
                messages = [m for m in await self.read_span(sid, gap[0], gap[1]) if readable(m)]
                labelled = await self.read_with_model(messages)
                async with self.lock:
                    await self.derive({sid: messages}, labelled=labelled)
                    self._progress[sid] = max(self._progress.get(sid, -1), gap[1])
                    await self.store.save_progress({sid: self._progress[sid]}, self.speakers)
                await self._drop_gap(sid, gap)
                total += len(messages)
                self._logger.info("fact gap backfilled", session_id=sid, read=len(messages))
            except Exception as exc:
                self._logger.warning("fact backfill failed", session_id=sid, error=str(exc))
            finally:
                self._busy -= 1
        return total

    # -- changes ----------------------------------------------------------------------------

    async def deleted(self, session_id: str, ids: Sequence[str]) -> int:
        """These messages are gone: never read them, and drop them from every fact."""
        wanted = [i for i in ids if isinstance(i, str) and i]
        for message_id in wanted:
            self._pending.pop(message_id, None)
        self._stepped.set()
        if not wanted or not self.store.present:
            return 0
        async with self.lock:
            return await self.derive({}, drop=wanted)

    async def rewritten(self, session_id: str, messages: Sequence[Message]) -> int:
        """These messages changed: what was read from their old text goes, the new text is
        read (a message still queued is simply read in its new version)."""
        now: list[Message] = []
        for message in messages:
            if not isinstance(message, Message) or not message.id:
                continue
            if message.id in self._pending:
                if readable(message):
                    self._pending[message.id] = (session_id, message)
                else:
                    del self._pending[message.id]
            else:
                now.append(message)
        if not now or not self.store.present:
            return 0
        fresh = [m for m in now if readable(m)]
        labelled = await self.read_with_model(fresh)
        async with self.lock:
            return await self.derive(
                {session_id: fresh}, drop=[m.id for m in now if m.id], labelled=labelled
            )

    def forget_person(self, person: Person) -> None:
        """Drop the queued messages of ``person`` (their facts are being erased)."""
        for message_id, (_, message) in list(self._pending.items()):
            if person.said(message):
                del self._pending[message_id]


__all__ = ["Deriver", "apply", "new_id", "readable", "statements"]
