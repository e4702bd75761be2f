"""``memory_context``: what Aalis knows, as messages a graph's model node puts in front.

A graph keeps its own ``messages`` channel and sends it to the model whole, so neither the
summary of what compression archived nor the recall of other threads reaches the model by
itself (docs/integrations/langgraph.md, "Summary and recall for the model"). A node asks
for them here, per call, and sends them in front of the channel without returning them:
they are never part of the state, so never checkpointed nor copied into the history.

The blocks are the ``prompt_contributions`` of the host's plugins (memory-vector's recall,
the fact layer's "what I know"), asked with the thread's session and the newest user
message; recall's scope is memory-vector's (``user`` by default: the same person's other
threads, so a new thread recalls from its first turn once its user message is stored,
which the saver does at the input checkpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from aalis_agent import (
    SUMMARY_HEADER,
    PromptRequest,
    collect_prompt_blocks,
    host_and_bridge,
)
from aalis_api_memory import MessagesById, compression, memory as memory_capability, supports
from aalis_schema_message import Message
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from aalis_langgraph._copies import flush_everywhere
from aalis_langgraph._entries import thread_of
from aalis_langgraph._messages import PLATFORM, _text_of

#: ``additional_kwargs`` key on every message ``memory_context`` returns.
CONTEXT_KEY = "aalis_context"


async def _summary(host: Any, session_id: str) -> str | None:
    handle = host.capability(compression)
    if not handle.present:
        return None
    try:
        record = await handle.use.summary(session_id)
    except Exception:
        return None  # a model call never fails for a summary
    return record.text if record is not None else None


async def _blocks(
    host: Any, session_id: str, platform: str, messages: Sequence[BaseMessage]
) -> list[str]:
    query = next(
        (
            text
            for m in reversed(messages)
            if isinstance(m, HumanMessage) and (text := _text_of(m.content))
        ),
        None,
    )
    if not query:
        return []
    with contextlib.suppress(ValueError):  # no loaded contract declares the hook
        host.hook_impls("prompt_contributions")
        shown = [
            Message(role="user" if isinstance(m, HumanMessage) else "assistant", content=text)
            for m in messages
            if (text := _text_of(m.content))
        ]
        request = PromptRequest(
            session_id=session_id, query=query, platform=platform, history=shown
        )
        try:
            return [b.content for b in await collect_prompt_blocks(host, request)]
        except Exception:
            return []
    return []


async def _stored(host: Any, session_id: str, messages: Sequence[BaseMessage], wait: float) -> None:
    """Wait (up to ``wait`` seconds) until the newest user message is in the history.

    LangGraph writes the input checkpoint in the background by default
    (``durability="async"``) while the first node runs, and the saver copies the user
    message into the history in that write: until it lands, a new thread's session has no
    person and recall's ``user`` scope reaches only itself. Waiting here lets that write
    finish on this loop; nothing is written, so nothing races with it."""
    newest = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    handle = host.capability(memory_capability)
    if newest is None or not newest.id or wait <= 0 or not handle.present:
        return
    store = handle.use
    if not supports(store, MessagesById, "get_messages_by_ids"):
        return
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        found = await store.get_messages_by_ids([newest.id])
        if any(r.session_id == session_id for r in found):
            return
        if asyncio.get_running_loop().time() >= deadline:
            return
        await asyncio.sleep(0.005)


async def _context(
    host: Any, config: RunnableConfig, messages: Sequence[BaseMessage], wait: float
) -> list[SystemMessage]:
    session_id = thread_of(config)
    platform = (config.get("configurable") or {}).get("platform") or PLATFORM
    # The savers' copies still owed on this loop (earlier runs, other threads of the
    # person) are made first, so recall reads every turn that ended before this one.
    await flush_everywhere()
    await _stored(host, session_id, messages, wait)
    out: list[SystemMessage] = []
    summary = await _summary(host, session_id)
    if summary:
        out.append(SystemMessage(SUMMARY_HEADER + summary, additional_kwargs={CONTEXT_KEY: True}))
    for block in await _blocks(host, session_id, str(platform), messages):
        out.append(SystemMessage(block, additional_kwargs={CONTEXT_KEY: True}))
    return out


async def amemory_context(
    host: Any, config: RunnableConfig, messages: Sequence[BaseMessage], *, wait: float = 1.0
) -> list[SystemMessage]:
    """The summary of the thread's archived history and the plugins' blocks (recall) for
    the newest user message of ``messages``, as system messages to send in front of them.

    ``config`` is the node's (its ``thread_id`` names the session; ``platform`` is read as
    the saver reads it). ``wait`` bounds how long to wait for the saver to have stored the
    newest user message (see ``_stored``; 0 with a saver that keeps no history). Empty when
    there is nothing to add; never raises for a plugin's fault. Send them, do not return
    them into the state."""
    _host, bridge = host_and_bridge(host)
    return await bridge.call(lambda: _context(_host, config, messages, wait))


def memory_context(
    host: Any, config: RunnableConfig, messages: Sequence[BaseMessage], *, wait: float = 1.0
) -> list[SystemMessage]:
    """``amemory_context`` for a sync node (a ``SyncHost``, or a host on another loop)."""
    _host, bridge = host_and_bridge(host)
    return bridge.call_sync(lambda: _context(_host, config, messages, wait))


__all__ = ["CONTEXT_KEY", "amemory_context", "memory_context"]
