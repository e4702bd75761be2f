"""A thread's messages kept as its Aalis session's history (docs/integrations/langgraph.md,
"The thread's conversation").

After every root checkpoint that changed the messages channel, the history of the session
named by the thread id is brought to that checkpoint's messages: what is new (by message id)
is appended through ``save_conversation`` (so recall and facts index it), what the graph
removed (``RemoveMessage``, or a run from an older checkpoint that left a branch behind) is
deleted by id, and a message the graph replaced under the same id is deleted and saved again
at its old place. A record in the thread's namespace (``MIRROR_KEY``) says which graph
message is which Aalis message, so the work per checkpoint is the difference only, and the
record goes with the checkpoints when the thread is deleted or cleared.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from aalis_agent import report_usage, save_conversation
from aalis_api_memory import (
    Delete,
    MemoryService,
    MessagesById,
    Person,
    Put,
    supports,
)
from aalis_schema_message import Message, new_message_id
from langchain_core.messages import BaseMessage, convert_to_messages

from aalis_langgraph._layout import MIRROR_KEY
from aalis_langgraph._messages import PLATFORM, digest, fingerprint, to_aalis, usable_id

_log = logging.getLogger("aalis_langgraph")

#: One record row, as read: the Aalis id (``id``), the stored timestamp (``ts``) and the
#: graph message's ``fp`` (its ``fingerprint``) or, in a record written before those,
#: ``digest``. Written as the compact list ``[id, fp, ts]`` (the record is rewritten at
#: every checkpoint that changed the messages, one row per message).
Row = dict[str, Any]


def _row(value: Any) -> Row | None:
    if isinstance(value, list) and len(value) == 3:
        return {"id": value[0], "fp": value[1], "ts": value[2]}
    if isinstance(value, dict) and "id" in value:
        return dict(value)
    return None


def _same(row: Row, message: BaseMessage, fp: str) -> bool:
    """Whether ``message`` is still the message ``row`` was saved from."""
    if "fp" in row:
        return bool(row["fp"] == fp)
    return bool(row.get("digest") == digest(message))  # an older record's row


def graph_messages(value: Any) -> list[BaseMessage] | None:
    """The channel's value as LangChain messages (a MessagesState channel already is; a
    plain list of dicts, strings or tuples is converted as LangChain would), or None when
    the channel does not hold messages at all (a graph may use the name for anything)."""
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    if all(isinstance(m, BaseMessage) for m in value):
        return list(value)
    try:
        return list(convert_to_messages(value))
    except (TypeError, ValueError, NotImplementedError):
        return None


def _keys(messages: Sequence[BaseMessage]) -> list[str]:
    """The identity of each graph message: its id, or (without one, in a channel without
    ``add_messages``) its position and content."""
    keys: list[str] = []
    seen: set[str] = set()
    for i, m in enumerate(messages):
        key = m.id if isinstance(m.id, str) and m.id else f"#{i}:{digest(m)}"
        if key in seen:  # a plain list may hold one message twice: two history messages
            key = f"{key}#{i}"
        seen.add(key)
        keys.append(key)
    return keys


async def mirror(
    memory: MemoryService,
    host: Any,
    session_id: str,
    space: str,
    value: Any,
    person: Person | None = None,
    platform: str = PLATFORM,
    also: Sequence[Put | Delete] = (),
) -> None:
    """Bring ``session_id``'s history to the graph messages ``value`` (see the module).

    ``person`` is who speaks in the thread: stamped on every user message saved, so the
    session is that person's for recall's ``user`` scope and for forgetting them; the
    record keeps it for the saves that have no config (``copy_thread``, ``prune``).
    ``also`` is written in the record's batch (or alone, when the history needs nothing):
    the due markers a copy made behind the checkpoints covers (``_copies.py``)."""
    messages = graph_messages(value)
    if messages is None:
        _log.warning(
            "thread %r: the mirrored channel does not hold messages (%s); its history is "
            "left as it is (AalisSaver(messages=None) mirrors nothing)",
            session_id,
            type(value).__name__,
        )
        if also:
            await memory.commit_metadata(list(also))
        return
    record = await memory.get_metadata(space, MIRROR_KEY) or {}
    rows: dict[str, Row] = {
        k: row for k, v in (record.get("messages") or {}).items() if (row := _row(v)) is not None
    }
    keys = _keys(messages)
    current = dict(zip(keys, messages, strict=True))
    digests = {key: fingerprint(m) for key, m in current.items()}
    gone = [key for key in rows if key not in current]
    changed = [
        key for key in rows if key in current and not _same(rows[key], current[key], digests[key])
    ]
    upgraded = any("fp" not in row for row in rows.values())
    for key in rows:
        if key in current:
            rows[key]["fp"] = digests[key]
    fresh = [key for key in keys if key not in rows]
    if not fresh and not changed and not gone and not upgraded:
        if also:
            await memory.commit_metadata(list(also))
        return
    # Everything is converted before anything is written: a message Aalis cannot store
    # (not JSON) raises here and the history stays as it was.
    if person is None:
        person = _recorded_person(record)
    platform = person.platform if person is not None else platform
    converted = {key: to_aalis(current[key], platform) for key in fresh + changed}
    if person is not None:
        converted = {
            key: person.stamp(m) if m.role == "user" else m for key, m in converted.items()
        }
    taken = await _taken(memory, [usable_id(current[k].id) for k in fresh])
    if gone or changed:
        await _delete(memory, host, session_id, [rows[k] for k in gone + changed])
        for key in gone:
            del rows[key]
    outgoing: list[tuple[str, Message]] = []
    for key in keys:
        if key in changed:
            old = rows[key]
            outgoing.append((key, converted[key].with_id(old["id"]).with_timestamp(old["ts"])))
        elif key in fresh:
            wanted = usable_id(current[key].id)
            owner = taken.get(wanted) if wanted else None
            if owner is not None and owner[0] == session_id:
                # Saved before a crash that lost the record: it is there, keep it.
                rows[key] = {"id": wanted, "fp": digests[key], "ts": owner[1]}
                continue
            ident = wanted if wanted is not None and owner is None else new_message_id()
            outgoing.append((key, converted[key].with_id(ident)))
    saved = (
        await save_conversation(memory, session_id, [m for _, m in outgoing], host=host)
        if outgoing
        else []
    )
    for (key, _), stored in zip(outgoing, saved, strict=False):
        rows[key] = {"id": stored.id, "fp": digests[key], "ts": stored.timestamp}
    kept: dict[str, Any] = {"messages": {k: [r["id"], r["fp"], r["ts"]] for k, r in rows.items()}}
    if person is not None:
        kept["person"] = [person.platform, person.user_id]
    await memory.commit_metadata([Put(space, MIRROR_KEY, kept), *also])
    if saved:
        # How long the session is now (the message count: the saver sees no model call's
        # window, so it claims no tokens), so memory-summary's count line can compress it.
        await report_usage(host, memory, session_id, platform, used=None, context_window=None)


def _recorded_person(record: dict[str, Any]) -> Person | None:
    """The person a mirror record names (None when it names none, or a broken one)."""
    value = record.get("person")
    if not isinstance(value, list) or len(value) != 2:
        return None
    return Person.from_metadata({"platform": value[0], "user_id": value[1]})


async def _taken(memory: MemoryService, ids: Sequence[str | None]) -> dict[str, tuple[str, int]]:
    """Which of ``ids`` the store already holds, and where: ``{id: (session, timestamp)}``.
    Ids are unique in the whole store, so a message copied to another thread
    (``copy_thread``) is saved there under an id of its own."""
    wanted = [i for i in ids if i is not None]
    if not wanted or not supports(memory, MessagesById, "get_messages_by_ids"):
        return {}
    found = await memory.get_messages_by_ids(wanted)
    return {
        str(r.message.id): (r.session_id, r.message.timestamp or 0)
        for r in found
        if r.message.id is not None
    }


async def _delete(memory: MemoryService, host: Any, session_id: str, rows: Sequence[Row]) -> None:
    ids = [str(r["id"]) for r in rows]
    if not supports(memory, MessagesById, "delete_messages_by_ids"):
        _log.warning(
            "session %r: the memory backend cannot delete messages by id; %d message(s) the "
            "graph removed stay in the history",
            session_id,
            len(ids),
        )
        return
    await memory.delete_messages_by_ids(session_id, ids)
    stamps = [int(r["ts"]) for r in rows if isinstance(r.get("ts"), int)]
    for event, payload in (
        ("memory_messages_deleted", {"session_id": session_id, "timestamps": stamps, "ids": ids}),
        ("history_changed", {"session_id": session_id}),
    ):
        # ValueError: no loaded contract declares the event, so nobody listens.
        with contextlib.suppress(ValueError):
            await host.emit(event, **payload)


__all__: list[str] = []
