"""Process marks: the instant between a save and its batch's mark, covered too.

The worker marks a batch before it embeds it (``gaps.py``), but a message exists from the
moment its save commits, and the worker only hears of it when ``memory_messages_saved``
arrives; a ``kill -9`` in between would leave it in no mark at all. So each running indexer
also keeps a **process mark**: a metadata entry (namespace ``memory-vector.processes``, a
fresh key per process) saying "messages stamped from ``since`` on may be mine and not yet
marked". A clean stop deletes it. Any host that starts later reads every process mark;
one whose process is dead becomes gaps — every session whose newest message is at or after
``since``, from ``since`` on — which that host backfills, and the entry is deleted.

Dead or alive: a process on the same machine is dead when its pid is gone (the common
case, decided at once); for any other, the mark's lease (the memory contract's ``Leases``
group, renewed every ``TTL_MS / 3``) tells: a lease a newcomer can take belonged to a process
that stopped renewing it. ``since`` moves forward while the indexer is idle (nothing queued,
nothing in flight), to ``SKEW_MS`` before now, so a dead process's mark names minutes, not
its whole life. A store without leases still gets process marks for same-machine deaths.

Not covered: a message *imported* with an old timestamp (before ``since``) whose importer
dies between the import's commit and the batch's mark; ``aalis vector check`` finds it
(missing, not in a gap) and ``--repair`` indexes it (docs/recall.md, "Gaps").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aalis_api_memory import Leases, MemoryService, Transfer, supports
from aalis_schema_message import new_message_id, now_ms

from aalis_plugin_memory_vector._gaps import GapBook

if TYPE_CHECKING:
    from aalis_core import Handle

#: Metadata namespace of the process marks: key = a fresh id per process.
PROCESSES_NAMESPACE = "memory-vector.processes"
LEASE_PREFIX = "memory-vector.process:"
TTL_MS = 30_000
#: How far before "now" an advanced mark starts: a message announced this long after its
#: timestamp was taken (a slow event delivery) is still covered.
SKEW_MS = 60_000
#: How often an idle indexer moves its mark forward.
ADVANCE_EVERY_S = 60.0
DEAD_REASON = "saved by a process that stopped before marking it for indexing"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, another user's: alive as far as we can tell
    return True


class ProcessMark:
    """This process's mark, and the adoption of dead processes' marks at start."""

    def __init__(
        self, memory: Handle[MemoryService], gaps: GapBook, logger: Any, idle: Callable[[], bool]
    ) -> None:
        self._memory = memory
        self._gaps = gaps
        self._logger = logger
        self._idle = idle
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self.key = new_message_id()
        self._holder = f"{self._host}:{self._pid}:{self.key}"
        self._task: asyncio.Task[None] | None = None
        self._advanced = time.monotonic()

    def _store(self) -> MemoryService | None:
        return self._memory.use if self._memory.present else None

    async def start(self) -> None:
        """Adopt dead processes' marks (as gaps), then write this process's mark."""
        store = self._store()
        if store is None:
            return
        try:
            await self._adopt_dead(store)
            await self._write(store, now_ms() - SKEW_MS)
        except Exception as exc:
            self._logger.error("process mark not written", error=str(exc))
            return
        self._task = asyncio.create_task(self._keep(), name="memory-vector process mark")

    async def stop(self) -> None:
        """A clean stop: the drain recorded what is left as gaps, so the mark can go."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        store = self._store()
        if store is None:
            return
        with contextlib.suppress(Exception):
            await store.delete_metadata(PROCESSES_NAMESPACE, self.key)
            if supports(store, Leases):
                await store.release_lease(LEASE_PREFIX + self.key, self._holder)

    async def _write(self, store: MemoryService, since: int) -> None:
        if supports(store, Leases) and not await store.acquire_lease(
            LEASE_PREFIX + self.key, self._holder, TTL_MS
        ):
            # Another host took our lease (it thought us dead and adopted our mark): carry
            # on under a new key, so our messages are never without a mark.
            self.key = new_message_id()
            self._holder = f"{self._host}:{self._pid}:{self.key}"
            await store.acquire_lease(LEASE_PREFIX + self.key, self._holder, TTL_MS)
        data = {"since": since, "host": self._host, "pid": self._pid}
        await store.save_metadata(PROCESSES_NAMESPACE, self.key, data)

    async def _keep(self) -> None:
        """Renew the lease; move ``since`` forward while idle."""
        while True:
            await asyncio.sleep(TTL_MS / 3000)
            store = self._store()
            if store is None:
                continue
            try:
                advance = self._idle() and time.monotonic() - self._advanced >= ADVANCE_EVERY_S
                current = await store.get_metadata(PROCESSES_NAMESPACE, self.key)
                since = current.get("since") if isinstance(current, dict) else None
                if advance or not isinstance(since, int):
                    since = now_ms() - SKEW_MS
                    self._advanced = time.monotonic()
                await self._write(store, since)
            except Exception as exc:
                self._logger.warning("process mark not renewed", error=str(exc))

    async def _dead(self, store: MemoryService, key: str, data: dict[str, Any]) -> bool:
        pid = data.get("pid")
        if data.get("host") == self._host and isinstance(pid, int) and not _pid_alive(pid):
            return True
        if not supports(store, Leases):
            return False
        # A lease nobody renews can be taken: its holder is gone. Ours now, released below.
        return await store.acquire_lease(LEASE_PREFIX + key, self._holder, TTL_MS)

    async def _adopt_dead(self, store: MemoryService) -> None:
        entries = await store.list_metadata(PROCESSES_NAMESPACE)
        for entry in entries:
            since = entry.data.get("since")
            if entry.key == self.key or not await self._dead(store, entry.key, entry.data):
                continue
            if isinstance(since, int) and not isinstance(since, bool):
                await self._sessions_as_gaps(store, since)
            await store.delete_metadata(PROCESSES_NAMESPACE, entry.key)
            if supports(store, Leases):
                await store.release_lease(LEASE_PREFIX + entry.key, self._holder)

    async def _sessions_as_gaps(self, store: MemoryService, since: int) -> None:
        if not supports(store, Transfer, "list_sessions"):
            self._logger.warning(
                "a dead process's messages cannot be found: the store cannot list sessions"
            )
            return
        for info in await store.list_sessions():  # newest first
            last = info.last_timestamp
            if last is None or last < since:
                break
            await self._gaps.record(info.session_id, [since, last], DEAD_REASON)


__all__ = ["PROCESSES_NAMESPACE", "ProcessMark"]
