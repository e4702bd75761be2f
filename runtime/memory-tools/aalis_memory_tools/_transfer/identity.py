"""Message ids in transfers: naming the records of older files, and finding ids already taken.

Export writes every message's id and import and migrate keep it
(docs/reference/memory-contract.md, "Message identity"). Two cases need more:

- **Files without ids** (written before identity existed). Their records get ids on import
  *from the file itself*: a hash of the session id, the record's position in the session
  (in store order) and the message's JSON (``derived_id``). Importing the same file twice
  names the same records the same way, so the second run recognises its own data by id.
  The plan (``transfer.plan``) also matches such a record to a stored message with the
  same content at the same position, so an old export re-imported into a store whose
  messages were named by a schema migration is still skipped.
- **Ids the target already holds elsewhere.** A store refuses a message whose id it holds
  (``MessageIdConflict``), and an import writes session after session, so a clash found
  by the store would leave the sessions before it written. ``ids_taken`` asks the target
  first (``get_messages_by_ids``, where the store offers it), so the transfer refuses
  whole, naming them, before it writes anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

from aalis_api_memory import MAX_IDS_PER_CALL, MemoryService, MessagesById, StoredMessage, supports

#: Crockford's base 32, as in ``new_message_id``: derived ids look like every other id.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def derived_id(session_id: str, position: int, record: StoredMessage) -> str:
    """The id of an id-less record of an export file: 26 characters, the same on every run.

    From the session, the position and the whole message (its JSON, keys sorted), so two
    equal messages of one session still get two ids, and an edited file names the edited
    records anew (they are new messages).
    """
    body = json.dumps(
        record.message.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    digest = hashlib.sha256(f"{session_id}\0{position}\0{body}".encode()).digest()
    value = int.from_bytes(digest[:17], "big") >> 6  # 130 bits: 26 characters of 5 bits
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


def named(session_id: str, records: Sequence[StoredMessage]) -> list[StoredMessage]:
    """``records`` (a whole session, in store order) with every missing id derived."""
    return [
        record
        if record.message.id is not None
        else StoredMessage(
            record.message.with_id(derived_id(session_id, position, record)), record.archived
        )
        for position, record in enumerate(records)
    ]


async def ids_taken(
    target: MemoryService, to_write: Iterable[tuple[str, Sequence[StoredMessage]]]
) -> list[str]:
    """``id (session)`` of every record to write whose id the target holds in another session.

    ``to_write`` pairs each session with the records that will be written into it (after a
    ``replace`` the session's own messages are gone, so only other sessions count). Empty
    when the target cannot look ids up: then the store's own ``MessageIdConflict`` is the
    last line of defence.
    """
    if not supports(target, MessagesById, "get_messages_by_ids"):
        return []
    taken: list[str] = []
    for session_id, records in to_write:
        ids = [r.message.id for r in records if r.message.id is not None]
        for start in range(0, len(ids), MAX_IDS_PER_CALL):
            found = await target.get_messages_by_ids(ids[start : start + MAX_IDS_PER_CALL])
            taken.extend(
                f"{r.message.id} (held by session {r.session_id!r})"
                for r in found
                if r.session_id != session_id
            )
    return taken


__all__ = ["derived_id", "ids_taken", "named"]
