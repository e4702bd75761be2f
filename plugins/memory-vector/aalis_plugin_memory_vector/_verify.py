"""The store is the truth: what the index holds is checked against it by message id.

A recall hit, and every batch the indexer has just written, is looked up in the message
store (``get_messages_by_ids``) before it counts: a vector whose message is gone is an
orphan (another process cleared, undid or deleted it) and is deleted; a vector whose text
is no longer the message's is stale (rewritten) and is replaced. This is what makes a
clear in one process final for every other process (docs/recall.md, "Identity and the
recall check").

A store without the ``MessagesById`` group is checked by reading the hit's millisecond
(``get_messages_by_session_range``) and matching the key; that is only as exact as such a
store allows, and the plugin says so once in the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_memory import CrossSession, MemoryService, MessagesById, supports
from aalis_schema_message import Message

from aalis_plugin_memory_vector._text import is_key_of

if TYPE_CHECKING:
    from aalis_core import Handle


@attrs.frozen
class Wanted:
    """A vector to check: its key (the message id), where it lives, and when."""

    key: str
    session_id: str
    timestamp: int


class StoreView:
    """Looks messages up in the message store by the key of their vector."""

    def __init__(self, memory: Handle[MemoryService], logger: Any) -> None:
        self._memory = memory
        self._logger = logger
        self._warned = False

    def _warn_once(self, what: str) -> None:
        if not self._warned:
            self._warned = True
            self._logger.warning(
                "the memory store cannot look messages up by id; recall is checked by "
                "timestamp, which cannot tell two messages of one millisecond apart",
                detail=what,
            )

    async def lookup(self, wanted: Sequence[Wanted]) -> dict[str, Message] | None:
        """The current message of every key that is still stored (a key left out is
        gone); None when there is no memory store to ask."""
        if self.unchecked:
            return None
        if not wanted:
            return {}
        memory = self._memory.use
        if supports(memory, MessagesById, "get_messages_by_ids"):
            ids = [w.key for w in wanted if not w.key.startswith("~")]
            records = await memory.get_messages_by_ids(ids) if ids else []
            by_key = {w.key: w for w in wanted}
            found: dict[str, Message] = {}
            for record in records:
                mid = record.message.id
                if (
                    mid is not None
                    and mid in by_key
                    and by_key[mid].session_id == record.session_id
                ):
                    found[mid] = record.message
            legacy = [w for w in wanted if w.key.startswith("~")]
            if legacy:
                found.update(await self._by_range(memory, legacy))
            return found
        self._warn_once("no get_messages_by_ids")
        return await self._by_range(memory, list(wanted))

    async def _by_range(
        self, memory: MemoryService, wanted: Sequence[Wanted]
    ) -> dict[str, Message]:
        found: dict[str, Message] = {}
        if not supports(memory, CrossSession, "get_messages_by_session_range"):
            return found
        for w in wanted:
            for message in await memory.get_messages_by_session_range(
                w.session_id, w.timestamp, w.timestamp
            ):
                if is_key_of(w.key, w.session_id, message):
                    found[w.key] = message
        return found

    @property
    def unchecked(self) -> bool:
        """True when the store offers neither lookup: hits then pass as they are."""
        if not self._memory.present:
            return True
        memory = self._memory.use
        if supports(memory, MessagesById, "get_messages_by_ids") or supports(
            memory, CrossSession, "get_messages_by_session_range"
        ):
            return False
        self._warn_once("no get_messages_by_session_range either: hits are not checked")
        return True


__all__ = ["StoreView", "Wanted"]
