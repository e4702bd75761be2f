"""A readers-writer lock for one event loop, so metadata batches look atomic to readers.

MongoDB applies ``commit_metadata``'s ordered ``bulk_write`` one operation at a time and the
store uses no transactions (they would rule out standalone servers). Without help, a
``list_metadata`` running while a batch is half-way through would see some keys new and some
old. Readers going through the same store therefore take the lock shared and a batch takes it
exclusive: within one process a batch is all-or-nothing to every reader of the store. Other
processes and clients on the same database can still observe a batch half-applied; see
docs/backends/mongodb.md.

Writers are preferred: once a batch waits, new readers queue behind it, so a busy reader
loop cannot starve a commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ReadWriteLock:
    """Many readers or one writer; a waiting writer blocks new readers."""

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        async with self._condition:
            await self._condition.wait_for(lambda: not self._writing and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            async with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        async with self._condition:
            self._writers_waiting += 1
            try:
                await self._condition.wait_for(lambda: not self._writing and not self._readers)
            finally:
                self._writers_waiting -= 1
                # A writer that gave up (cancelled) must release the readers it held back.
                self._condition.notify_all()
            self._writing = True
        try:
            yield
        finally:
            async with self._condition:
                self._writing = False
                self._condition.notify_all()


__all__ = ["ReadWriteLock"]
