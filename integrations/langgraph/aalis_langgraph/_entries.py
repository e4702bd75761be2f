"""The entries of a thread's namespace, as the saver encodes them (the layout is in
``_saver.py``'s docstring and docs/integrations/langgraph.md, "Where the checkpoints are").
"""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint

#: A thread's entries by their parsed key.
Entries = dict[tuple[Any, ...], dict[str, Any]]


def parts(key: str) -> tuple[Any, ...]:
    try:
        value = json.loads(key)
    except ValueError:
        return ()
    return tuple(value) if isinstance(value, list) else ()


def pack(typed: tuple[str, bytes]) -> list[str]:
    return [typed[0], base64.b64encode(typed[1]).decode("ascii")]


def unpack(packed: Any) -> tuple[str, bytes]:
    return str(packed[0]), base64.b64decode(packed[1])


def thread_of(config: RunnableConfig) -> str:
    thread_id = config.get("configurable", {}).get("thread_id")
    if thread_id is None or thread_id == "":
        raise ValueError("the config must name a thread: config['configurable']['thread_id']")
    return str(thread_id)


def head_entry(
    cid: str,
    entry: dict[str, Any],
    checkpoint: Checkpoint,
    written: dict[str, tuple[Any, Any]],
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    """The head of a namespace: the newest checkpoint's id, its entry, and for each channel
    it reads the version and packed value, so reading the latest state takes no blob read.

    ``written`` is this put's blobs (``channel -> (version, packed or None)``); a channel
    this put did not write keeps what the previous head knew of it at the same version. A
    channel known at neither is left out and read from its blob (``_get_tuple``)."""
    before = (previous or {}).get("values") or {}
    known: dict[str, list[Any]] = {}
    for channel, version in checkpoint.get("channel_versions", {}).items():
        if channel in written and written[channel][0] == version:
            known[channel] = [version, written[channel][1]]
        elif isinstance(before.get(channel), list) and before[channel][0] == version:
            known[channel] = before[channel]
    return {"id": cid, "entry": entry, "values": known}


def rewrites(head: dict[str, Any], written: dict[str, tuple[Any, Any]]) -> bool:
    """Whether this put writes a blob the head carries (same channel, same version)."""
    carried = head.get("values") or {}
    return any(
        isinstance(carried.get(ch), list) and carried[ch][0] == version
        for ch, (version, _packed) in written.items()
    )


__all__: list[str] = []
