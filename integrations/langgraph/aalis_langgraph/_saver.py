"""``AalisSaver``: LangGraph's checkpointer, with checkpoints in the Aalis metadata store.

Why the metadata store: it is in every memory provider (SQLite, PostgreSQL, MongoDB, the
in-memory one), its batches are atomic on the transactional ones, and ``aalis export``,
``aalis import`` and ``aalis migrate`` already carry every namespace, so a graph's threads
move with the rest of the memory (docs/integrations/langgraph.md).

Layout, one namespace per thread (``langgraph:<thread id>``), JSON-encoded list keys:

- ``["c", ns, checkpoint_id]``: the checkpoint without its channel values, its metadata
  (both as the graph's serializer wrote them, base64), the parent id and the run id;
- ``["b", ns, channel, version]``: one channel value at one version (a checkpoint names the
  versions it reads; unchanged channels are not written again, as LangGraph's own savers do);
- ``["w", ns, checkpoint_id]``: the pending writes of that checkpoint;
- ``["h", ns]``: the newest checkpoint id, so the latest state is read without a listing.

- ``["m"]``: the mirror record, which graph message is which message of the thread's
  session (``_mirror.py``: the thread's conversation is also its session's history).

Namespace ``langgraph-threads`` lists the threads (for ``list(None)``, ``delete_for_runs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

from aalis_agent import host_and_bridge, run_clear
from aalis_api_memory import (
    Delete,
    MemoryService,
    Person,
    Put,
    check_session_id,
    memory as memory_capability,
)
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from aalis_langgraph._copies import DUE, HistoryCopies, owned_elsewhere
from aalis_langgraph._entries import (
    Entries,
    head_entry as _head,
    pack as _pack,
    parts as _parts,
    rewrites as _rewrites,
    thread_of as _thread,
    unpack as _unpack,
)
from aalis_langgraph._layout import MIRROR_KEY, THREADS, entry_key as _key, thread_namespace
from aalis_langgraph._messages import PLATFORM
from aalis_langgraph._mirror import mirror

T = TypeVar("T")


#: How long (seconds) a thread's history copy waits for more puts before it is made: well
#: under what a person notices in `aalis serve`, and long enough that the puts of one graph
#: step (a tool-calling step writes several) share one copy.
HISTORY_DELAY = 0.1


#: A due marker younger than this (ms) is left to the process that wrote it: a live one
#: makes its copy within its ``history_delay``.
RECOVER_AFTER_MS = 5_000


def _marker(channel: str, person: Person | None) -> dict[str, Any]:
    """A due marker's data: the channel copied, who speaks (so a recovered copy stamps
    them), and when (so a recovery leaves a live process's markers to it)."""
    return {
        "channel": channel,
        "person": [person.platform, person.user_id] if person is not None else None,
        "at": int(time.time() * 1000),
    }


def _marker_person(data: dict[str, Any]) -> Person | None:
    value = data.get("person")
    if not isinstance(value, list) or len(value) != 2:
        return None
    try:
        return Person(str(value[0]), str(value[1]))
    except ValueError:
        return None


def _config(thread_id: str, ns: str, cid: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}


class AalisSaver(BaseCheckpointSaver[str]):
    """A ``BaseCheckpointSaver`` over the host's memory provider (sync and async).

    ``host`` is a started ``aalis_core.Host`` (use the ``a*`` methods, ``ainvoke``) or an
    ``aalis_agent.SyncHost`` (both sides); ``memory`` a handle to pin a consumer.
    ``messages`` names the channel whose messages are kept as the history of the session
    named by the thread id (``"messages"``, MessagesState's; None keeps no history).
    ``platform`` and ``user_id`` name the person who speaks in the threads; a run's
    ``config["configurable"]["user_id"]`` (and ``["platform"]``) names it per thread and
    wins. The person is stamped on the user messages of the history, which is what
    recall's ``user`` scope and ``aalis forget --person`` go by (docs/host/privacy.md).

    The history copy is made ``history_delay`` seconds (default 0.1) after a put, once for
    all the puts of the thread in between, so a put costs about what the checkpoint costs;
    ``aflush``/``flush`` waits for it, and so do the host's stop, a clear and a forget.
    ``history_delay=0`` makes the copy inside every put, which then fails whole on a
    message the history cannot hold (docs/integrations/langgraph.md).
    """

    def __init__(
        self,
        host: Any,
        *,
        memory: Any = None,
        serde: SerializerProtocol | None = None,
        messages: str | None = "messages",
        platform: str = PLATFORM,
        user_id: str | None = None,
        history_delay: float = HISTORY_DELAY,
    ) -> None:
        super().__init__(serde=serde)
        self.platform = platform
        self.user_id = user_id
        self._person(None)  # a bad default is refused here, not at the first put
        if messages is not None and (not isinstance(messages, str) or not messages):
            raise ValueError(f"messages must name a channel or be None, got {messages!r}")
        self.messages_channel = messages
        self._host, self._bridge = host_and_bridge(host)
        self._memory = memory if memory is not None else self._host.capability(memory_capability)
        # put_writes reads, merges and writes one entry; parallel tasks of one step write to
        # the same checkpoint at once, so merges of one saver take turns per checkpoint.
        self._locks: dict[tuple[str, str, str], asyncio.Lock] = {}
        if (
            isinstance(history_delay, bool)
            or not isinstance(history_delay, int | float)
            or not 0 <= history_delay <= 60
        ):
            raise ValueError(f"history_delay must be seconds from 0 to 60, got {history_delay!r}")
        self.history_delay = float(history_delay)
        # The copy into the history is made behind the puts (``_copies.py``) unless the
        # delay is 0, which makes it inside each put as before.
        self._copies = (
            HistoryCopies(self._copy, self.history_delay)
            if history_delay and messages is not None
            else None
        )
        self._recovered = False

    @property
    def _store(self) -> MemoryService:
        return cast("MemoryService", self._memory.use)

    def _person(self, config: RunnableConfig | None) -> Person | None:
        """Who speaks in the thread ``config`` runs: its ``user_id``/``platform``
        (configurable), else the saver's; None when no user id is known. A malformed one
        is a ``ValueError`` before anything is written."""
        configurable = (config or {}).get("configurable") or {}
        user_id = configurable.get("user_id", self.user_id)
        platform = configurable.get("platform", self.platform)
        if user_id is None:
            return None
        if isinstance(user_id, int) and not isinstance(user_id, bool):
            user_id = str(user_id)  # chat platforms' numeric ids
        if not isinstance(user_id, str) or not isinstance(platform, str):
            raise ValueError(
                f"the person is (platform, user_id), two strings: got platform={platform!r}, "
                f"user_id={user_id!r} (config['configurable'] or AalisSaver(...))"
            )
        return Person(platform, user_id)

    def _sync(self, make: Callable[[], Awaitable[T]]) -> T:
        return self._bridge.call_sync(make)

    async def _async(self, make: Callable[[], Awaitable[T]]) -> T:
        return await self._bridge.call(make)

    # -- reading ----------------------------------------------------------------------------

    async def _entries(self, thread_id: str) -> Entries:
        listed = await self._store.list_metadata(thread_namespace(thread_id))
        return {parts: e.data for e in listed if (parts := _parts(e.key))}

    def _tuple(
        self,
        thread_id: str,
        ns: str,
        cid: str,
        entry: dict[str, Any],
        blobs: dict[str, Any],
        writes: dict[str, Any] | None,
    ) -> CheckpointTuple:
        checkpoint: Checkpoint = self.serde.loads_typed(_unpack(entry["checkpoint"]))
        values = {ch: self.serde.loads_typed(_unpack(v)) for ch, v in blobs.items()}
        rows = sorted(
            (writes or {}).get("writes", []), key=lambda w: writes_sort_key(w[4], w[0], w[1])
        )
        parent = entry.get("parent")
        return CheckpointTuple(
            config=_config(thread_id, ns, cid),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed(_unpack(entry["metadata"])),
            parent_config=_config(thread_id, ns, str(parent)) if parent else None,
            pending_writes=[(w[0], w[2], self.serde.loads_typed(_unpack(w[3]))) for w in rows],
        )

    def _blob_values(self, entry: dict[str, Any], ns: str, entries: Entries) -> dict[str, Any]:
        """The channel values a checkpoint names, from a thread's listed entries."""
        checkpoint = self.serde.loads_typed(_unpack(entry["checkpoint"]))
        out: dict[str, Any] = {}
        for channel, version in checkpoint.get("channel_versions", {}).items():
            blob = entries.get(("b", ns, channel, version))
            if blob is not None and blob.get("value") is not None:
                out[channel] = blob["value"]
        return out

    async def _newest(
        self, space: str, ns: str
    ) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
        """The newest checkpoint of namespace ``ns``: its id, its entry and the channel values
        the head carries. The head carries the newest checkpoint whole (see ``_head``): the
        latest state is two reads however long the thread, where it was one per channel."""
        head = await self._store.get_metadata(space, _key("h", ns))
        if head is None:
            return None
        cid = str(head["id"])
        if isinstance(head.get("entry"), dict):
            return cid, head["entry"], dict(head.get("values") or {})
        entry = await self._store.get_metadata(space, _key("c", ns, cid))
        return None if entry is None else (cid, entry, {})

    async def _packed(
        self, space: str, ns: str, channel: str, version: Any, known: dict[str, Any]
    ) -> Any:
        """A channel value at ``version`` as stored (packed): the head's copy when it carries
        that version, else its blob's; None when it has none."""
        carried = known.get(channel)
        if isinstance(carried, list) and carried[0] == version:
            return carried[1]
        blob = await self._store.get_metadata(space, _key("b", ns, channel, version))
        return None if blob is None else blob.get("value")

    async def _get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id = _thread(config)
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        space = thread_namespace(thread_id)
        cid = get_checkpoint_id(config)
        known: dict[str, Any] = {}
        if cid is None:
            newest = await self._newest(space, ns)
            if newest is None:
                return None
            cid, entry, known = newest
        else:
            found = await self._store.get_metadata(space, _key("c", ns, cid))
            if found is None:
                return None
            entry = found
        checkpoint = self.serde.loads_typed(_unpack(entry["checkpoint"]))
        blobs: dict[str, Any] = {}
        for channel, version in checkpoint.get("channel_versions", {}).items():
            packed = await self._packed(space, ns, channel, version, known)
            if packed is not None:
                blobs[channel] = packed
        writes = await self._store.get_metadata(space, _key("w", ns, cid))
        return self._tuple(thread_id, ns, cid, entry, blobs, writes)

    async def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> list[CheckpointTuple]:
        if config is not None:
            threads = [_thread(config)]
            want_ns = config["configurable"].get("checkpoint_ns")
            want_id = get_checkpoint_id(config)
        else:
            threads = [e.key for e in await self._store.list_metadata(THREADS)]
            want_ns, want_id = None, None
        before_id = get_checkpoint_id(before) if before else None
        out: list[CheckpointTuple] = []
        for thread_id in threads:
            entries = await self._entries(thread_id)
            checkpoints = sorted(
                ((p[1], p[2]) for p in entries if p[0] == "c" and len(p) == 3),
                key=lambda p: p[1],
                reverse=True,
            )
            for ns, cid in checkpoints:
                if limit is not None and len(out) >= limit:
                    return out
                if want_ns is not None and ns != want_ns:
                    continue
                if (want_id and cid != want_id) or (before_id and cid >= before_id):
                    continue
                entry = entries[("c", ns, cid)]
                if filter:
                    metadata = self.serde.loads_typed(_unpack(entry["metadata"]))
                    if not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                blobs = self._blob_values(entry, ns, entries)
                out.append(
                    self._tuple(thread_id, ns, cid, entry, blobs, entries.get(("w", ns, cid)))
                )
        return out if limit is None else out[: max(limit, 0)]

    # -- writing ----------------------------------------------------------------------------

    async def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id = _thread(config)
        person = self._person(config)  # a malformed one fails the put before any write
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        space = thread_namespace(thread_id)
        copy = dict(checkpoint)
        values: dict[str, Any] = copy.pop("channel_values", {})  # type: ignore[assignment]
        full = get_checkpoint_metadata(config, metadata)
        cid = str(checkpoint["id"])
        written = {
            channel: (
                version,
                _pack(self.serde.dumps_typed(values[channel])) if channel in values else None,
            )
            for channel, version in new_versions.items()
        }
        ops: list[Put | Delete] = [
            Put(space, _key("b", ns, channel, version), {"value": packed})
            for channel, (version, packed) in written.items()
        ]
        entry: dict[str, Any] = {
            "checkpoint": _pack(self.serde.dumps_typed(copy)),
            "metadata": _pack(self.serde.dumps_typed(full)),
            "parent": config["configurable"].get("checkpoint_id"),
            "run_id": full.get("run_id") if isinstance(full.get("run_id"), str) else None,
        }
        ops.append(Put(space, _key("c", ns, cid), entry))
        head = await self._store.get_metadata(space, _key("h", ns))
        newest = head is None or str(head.get("id", "")) <= cid
        if newest:
            ops.append(Put(space, _key("h", ns), _head(cid, entry, checkpoint, written, head)))
        elif head is not None and _rewrites(head, written):
            # An older checkpoint rewrote a blob the head carries: the head follows it.
            carried = dict(head.get("values") or {})
            for ch, (version, packed) in written.items():
                if isinstance(carried.get(ch), list) and carried[ch][0] == version:
                    carried[ch] = [version, packed]
            ops.append(Put(space, _key("h", ns), {**head, "values": carried}))
        ops.append(Put(THREADS, thread_id, {"namespace": space}))
        channel = self.messages_channel
        copies = self._copies
        if channel is not None and ns == "" and newest and channel in new_versions:
            if copies is None:
                # Before the checkpoint: a message Aalis cannot store fails the put whole.
                await mirror(
                    self._store,
                    self._host,
                    thread_id,
                    space,
                    values.get(channel),
                    person,
                    self.platform,
                )
            else:
                await self._recover()
                owed = copies.owed_person(thread_id)
                if person is not None and owed is not None and owed != person:
                    # The owed copy stamps the person of its newest put: another person's
                    # turn waits until the previous one's messages carry theirs.
                    await self._settle(thread_id)
                window = copies.window(thread_id)
                try:
                    if window is None:
                        ops.append(Put(DUE, _key(thread_id, cid), _marker(channel, person)))
                    await self._store.commit_metadata(ops)
                except BaseException:
                    copies.release(thread_id, window)
                    raise
                copies.join(thread_id, cid, person, window)
                return _config(thread_id, ns, cid)
        await self._store.commit_metadata(ops)
        return _config(thread_id, ns, cid)

    async def _copy(self, thread_id: str, person: Person | None, cids: Sequence[str]) -> None:
        """The copy ``_copies.py`` owes ``thread_id``: its history brought to the newest root
        checkpoint the store holds now, with the due markers of ``cids`` deleted alongside."""
        channel = self.messages_channel
        assert channel is not None
        space = thread_namespace(thread_id)
        done = [Delete(DUE, _key(thread_id, cid)) for cid in cids]
        found, value = await self._newest_value(thread_id, channel)
        if found and value is None:
            # The newest checkpoint never wrote the channel: nothing to copy, nothing to
            # take away (not an empty conversation).
            await self._store.commit_metadata(done)
            return
        if not found and await self._store.get_metadata(space, MIRROR_KEY) is None:
            await self._store.commit_metadata(done)  # deleted or cleared since: no history
            return
        await mirror(self._store, self._host, thread_id, space, value, person, self.platform, done)

    async def _newest_value(self, thread_id: str, channel: str) -> tuple[bool, Any]:
        """Whether the thread has a newest root checkpoint, and its value of ``channel``
        (None when it has none): usually one read (the head), and only that channel is
        decoded."""
        space = thread_namespace(thread_id)
        newest = await self._newest(space, "")
        if newest is None:
            return False, None
        _cid, entry, known = newest
        checkpoint = self.serde.loads_typed(_unpack(entry["checkpoint"]))
        version = checkpoint.get("channel_versions", {}).get(channel)
        if version is None:
            return True, None
        packed = await self._packed(space, "", channel, version, known)
        return True, None if packed is None else self.serde.loads_typed(_unpack(packed))

    async def _recover(self) -> None:
        """Owe again the copies an earlier saver's process still owed when it stopped (its
        due markers), once per saver, at its first put."""
        copies = self._copies
        if self._recovered or copies is None:
            return
        self._recovered = True
        try:
            listed = await self._store.list_metadata(DUE)
        except BaseException:
            self._recovered = False
            raise
        now = int(time.time() * 1000)
        young = False
        for entry in listed:
            key = _parts(entry.key)
            data = entry.data if isinstance(entry.data, dict) else {}
            if len(key) != 2 or data.get("channel", "messages") != self.messages_channel:
                continue  # another saver's channel: its copy is that saver's to make
            thread_id, cid = str(key[0]), str(key[1])
            if owned_elsewhere(copies, thread_id):
                continue  # another saver of this process owes it: its markers are its own
            at = data.get("at")
            if isinstance(at, int) and now - at < RECOVER_AFTER_MS:
                young = True  # most likely a live process's, copied within the delay
                continue
            copies.join(thread_id, cid, _marker_person(data), None)
        if young:
            # Look again later: a marker that outlives that was left by a stopped process.
            asyncio.get_running_loop().call_later(
                RECOVER_AFTER_MS / 1000, setattr, self, "_recovered", False
            )

    async def _flush(self, thread_id: str | None = None) -> None:
        if self._copies is not None:
            await self._recover()
            await self._copies.flush(thread_id)

    async def _put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> None:
        thread_id = _thread(config)
        self._person(config)  # as in ``_put``: a malformed person writes nothing
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        cid = str(config["configurable"]["checkpoint_id"])
        space, key = thread_namespace(thread_id), _key("w", ns, cid)
        lock = self._locks.setdefault((thread_id, ns, cid), asyncio.Lock())
        async with lock:
            stored = await self._store.get_metadata(space, key) or {"writes": []}
            rows: dict[tuple[str, int], list[Any]] = {(r[0], r[1]): r for r in stored["writes"]}
            for idx, (channel, value) in enumerate(writes):
                inner = (task_id, WRITES_IDX_MAP.get(channel, idx))
                if inner[1] >= 0 and inner in rows:
                    continue
                rows[inner] = [
                    task_id,
                    inner[1],
                    channel,
                    _pack(self.serde.dumps_typed(value)),
                    task_path,
                ]
            await self._store.commit_metadata(
                [
                    Put(space, key, {"writes": list(rows.values())}),
                    Put(THREADS, thread_id, {"namespace": space}),
                ]
            )

    async def _delete_thread(self, thread_id: str) -> None:
        # An owed copy is made first: one made after the deletion would bring the thread's
        # messages back into a history the deletion clears.
        await self._settle(str(thread_id))
        space = thread_namespace(str(thread_id))
        mirrored = await self._store.get_metadata(space, MIRROR_KEY) is not None
        keys = [e.key for e in await self._store.list_metadata(space)]
        await self._store.commit_metadata(
            [*(Delete(space, k) for k in keys), Delete(THREADS, str(thread_id))]
        )
        if mirrored:
            # The thread's conversation is its session's history: it goes the way every
            # clear goes, so its summary, vectors and facts go too.
            await run_clear(self._host, "session", session_id=check_session_id(str(thread_id)))

    async def _settle(self, thread_id: str) -> None:
        """Make ``thread_id``'s owed copy before an operation that moves or deletes the
        thread; one that failed stays owed (logged) and stops nothing here."""
        if self._copies is not None and self._copies.owes(thread_id):
            # A failure was logged by the copy; its markers stay for a later one.
            with contextlib.suppress(Exception):
                await self._copies.flush(thread_id)

    async def _remirror(self, thread_id: str) -> None:
        """Bring the session's history to the thread's newest root checkpoint, after an
        operation that moved it (a copy, a deletion of runs)."""
        channel = self.messages_channel
        if channel is None:
            return
        await self._settle(thread_id)
        found, value = await self._newest_value(thread_id, channel)
        space = thread_namespace(thread_id)
        if not found and await self._store.get_metadata(space, MIRROR_KEY) is None:
            return
        # No run config here: the person is the one the thread's record names (``mirror``).
        await mirror(self._store, self._host, thread_id, space, value, None, self.platform)

    async def _delete_for_runs(self, run_ids: Sequence[str]) -> None:
        wanted = {str(r) for r in run_ids}
        if not wanted:
            return
        for thread in await self._store.list_metadata(THREADS):
            entries = await self._entries(thread.key)
            doomed = {
                (p[1], p[2])
                for p, data in entries.items()
                if p[0] == "c" and len(p) == 3 and data.get("run_id") in wanted
            }
            if doomed:
                await self._remove(thread.key, entries, doomed)

    async def _remove(self, thread_id: str, entries: Entries, doomed: set[tuple[str, str]]) -> None:
        """Delete checkpoints ``(ns, id)`` with their writes, then blobs nothing reads, and
        move each namespace's head to its newest survivor."""
        space = thread_namespace(thread_id)
        ops: list[Put | Delete] = []
        for ns, cid in doomed:
            ops.append(Delete(space, _key("c", ns, cid)))
            ops.append(Delete(space, _key("w", ns, cid)))
        survivors = {
            (p[1], p[2]): data
            for p, data in entries.items()
            if p[0] == "c" and len(p) == 3 and (p[1], p[2]) not in doomed
        }
        read: set[tuple[str, str, Any]] = set()
        for (ns, _cid), data in survivors.items():
            checkpoint = self.serde.loads_typed(_unpack(data["checkpoint"]))
            read.update((ns, ch, ver) for ch, ver in checkpoint.get("channel_versions", {}).items())
        for parts in entries:
            if parts[0] == "b" and len(parts) == 4 and (parts[1], parts[2], parts[3]) not in read:
                ops.append(Delete(space, _key(*parts)))
        for ns in {ns for ns, _ in doomed}:
            left = [cid for (n, cid) in survivors if n == ns]
            ops.append(
                Put(space, _key("h", ns), {"id": max(left)})
                if left
                else Delete(space, _key("h", ns))
            )
        if not survivors:
            ops.append(Delete(THREADS, thread_id))
        await self._store.commit_metadata(ops)
        if any(ns == "" for ns, _ in doomed):
            await self._remirror(thread_id)

    async def _copy_thread(self, source: str, target: str) -> None:
        await self._settle(str(source))  # its record names the person the copy speaks for
        entries = await self._entries(str(source))
        if not entries:
            return
        space = thread_namespace(str(target))
        # The mirror record names the source session's messages: the target's own session
        # gets its copies (under ids of their own) from the copied newest checkpoint.
        ops: list[Put | Delete] = [
            Put(space, _key(*p), data) for p, data in entries.items() if p != ("m",)
        ]
        ops.append(Put(THREADS, str(target), {"namespace": space}))
        speaker = entries.get(("m",), {}).get("person")
        if speaker and await self._store.get_metadata(space, MIRROR_KEY) is None:
            # The copy is the same person's conversation: its user messages carry them too.
            ops.append(Put(space, MIRROR_KEY, {"messages": {}, "person": speaker}))
        await self._store.commit_metadata(ops)
        await self._remirror(str(target))

    async def _prune(self, thread_ids: Sequence[str], strategy: str) -> None:
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(
                f"unknown prune strategy {strategy!r}; expected 'keep_latest' or 'delete'"
            )
        for thread_id in thread_ids:
            if strategy == "delete":
                await self._delete_thread(str(thread_id))
                continue
            entries = await self._entries(str(thread_id))
            latest: dict[str, str] = {}
            for p in entries:
                if p[0] == "c" and len(p) == 3 and p[2] > latest.get(p[1], ""):
                    latest[p[1]] = p[2]
            doomed = {
                (p[1], p[2])
                for p in entries
                if p[0] == "c" and len(p) == 3 and latest[p[1]] != p[2]
            }
            if doomed:
                await self._remove(str(thread_id), entries, doomed)

    # -- LangGraph's interface: async -------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._async(lambda: self._get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for found in await self._async(lambda: self._list(config, filter, before, limit)):
            yield found

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._async(lambda: self._put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._async(lambda: self._put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._async(lambda: self._delete_thread(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._async(lambda: self._delete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._async(lambda: self._copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._async(lambda: self._prune(thread_ids, strategy))

    async def aflush(self, thread_id: str | None = None) -> None:
        """Make the history copies still owed now (one thread's, or every thread's) and
        wait for them, including those an earlier process left owed. Raises the first copy
        that failed since the last flush (a message Aalis cannot store, a store error).

        The host's stop, ``aalis clear`` and ``aalis forget`` in this process flush for you;
        call it when this process reads the history right after a run."""
        await self._async(lambda: self._flush(thread_id))

    # -- LangGraph's interface: sync (a SyncHost, or a host on another thread's loop) -------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(lambda: self._get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        yield from self._sync(lambda: self._list(config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._sync(lambda: self._put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._sync(lambda: self._put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync(lambda: self._delete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync(lambda: self._delete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(lambda: self._copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync(lambda: self._prune(thread_ids, strategy))

    def flush(self, thread_id: str | None = None) -> None:
        """``aflush`` from synchronous code (a ``SyncHost``)."""
        self._sync(lambda: self._flush(thread_id))

    def get_next_version(self, current: str | None, channel: None) -> str:
        """``<counter>.<random>``, as LangGraph's own savers: ordered, and unique when two
        forks of a thread bump one channel from the same version."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"


__all__ = ["AalisSaver"]
