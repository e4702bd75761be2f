"""The entries of a thread's namespace, as the saver encodes them (the layout is in
``_saver.py``'s docstring and docs/integrations/langgraph.md, "Where the checkpoints are").
"""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint

#: The largest channel value (base64 characters) the head carries; a larger one is read
#: from its blob (see ``head_entry``).
HEAD_INLINE_MAX = 16 * 1024

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
    """The head of a namespace: the newest checkpoint's id, its entry, and for each small
    channel it reads the version and packed value, so reading the latest state takes no
    read per channel.

    ``written`` is this put's blobs (``channel -> (version, packed or None)``); a channel
    this put did not write keeps what the previous head knew of it at the same version. A
    channel known at neither, or larger than ``HEAD_INLINE_MAX``, is left out and read
    from its blob (``_get_tuple``): a big value (a long ``messages`` list) is written
    once per checkpoint, not twice, and one more read costs little beside decoding it."""
    before = (previous or {}).get("values") or {}
    known: dict[str, list[Any]] = {}
    for channel, version in checkpoint.get("channel_versions", {}).items():
        if channel in written and written[channel][0] == version:
            packed = written[channel][1]
            if packed is None or len(packed[1]) <= HEAD_INLINE_MAX:
                known[channel] = [version, packed]
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
