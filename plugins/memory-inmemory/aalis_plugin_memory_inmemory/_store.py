"""``InMemoryMemory``: the reference ``MemoryService``, kept in process memory.

It is the executable reading of the memory contract (docs/reference/memory-contract.md):
every optional method and extension is here, written for clarity rather than speed, so that
when a database backend and this one disagree under the conformance kit, this one is the
easier to check by eye.

Why it is still careful:

* Copies on write and on read. Callers share nothing with the store: a message is copied
  when saved and again when returned, and metadata is kept as JSON text (which also lets the
  store hold an unreadable entry, as a database can).
* Atomic calls. ``CompleteMemoryBackend`` (aalis_api_memory._backend) validates the whole
  input first; the storage methods here then do their work without suspending, so on one
  event loop no other coroutine can observe half a batch.
* Order by ``(timestamp, insertion sequence)``, as every backend must.
* Ids unique in the store: an index ``id -> (session, row)`` refuses a second message with
  a stored id (``MessageIdConflict``) before anything changes, and finds messages by id.
"""

from __future__ import annotations

from aalis_plugin_memory_inmemory._base import InMemoryBase
from aalis_plugin_memory_inmemory._exact import InMemoryExact
from aalis_plugin_memory_inmemory._history import InMemoryHistory
from aalis_plugin_memory_inmemory._identity import InMemoryIdentity
from aalis_plugin_memory_inmemory._leases import InMemoryLeases
from aalis_plugin_memory_inmemory._metadata import InMemoryMetadata
from aalis_plugin_memory_inmemory._queries import InMemoryQueries
from aalis_plugin_memory_inmemory._transfer import InMemoryTransfer


class InMemoryMemory(
    InMemoryHistory,
    InMemoryQueries,
    InMemoryIdentity,
    InMemoryTransfer,
    InMemoryExact,
    InMemoryMetadata,
    InMemoryLeases,
    InMemoryBase,
):
    """Chat history and metadata in dicts; nothing survives the process.

    Built with ``InMemoryMemory(range_query_limit=..., cross_session_max_limit=...,
    logger=...)`` (``base.py``). Arguments are checked by ``CompleteMemoryBackend``; each group
    of storage methods is a mixin of its own module (``history.py``, ``queries.py``,
    ``identity.py``, ``transfer.py``, ``exact.py``, ``metadata.py``, ``leases.py``).
    """


__all__ = ["InMemoryMemory"]
