"""``AalisRecallBlock``: a LlamaIndex ``Memory`` block with what Aalis recalls for the turn.

LlamaIndex's ``Memory`` asks each memory block for content before every model call and
puts it in the system prompt. This block gives the summary of what compression archived in
the memory's session (the turns ``Memory`` no longer holds), then asks the host's prompt
contributors (semantic recall from memory-vector, and any other plugin that contributes)
for the newest user message: the same blocks ``aalis chat`` gets, with the same privacy
scope, dedup against the history and score floor (docs/integrations/llamaindex.md).
"""

from __future__ import annotations

from typing import Any

from aalis_agent import (
    SUMMARY_HEADER,
    LoopBridge,
    PromptRequest,
    collect_prompt_blocks,
    host_and_bridge,
)
from aalis_api_memory import compression
from aalis_schema_message import Message
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr


def _text(message: ChatMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else ""


class AalisRecallBlock(BaseMemoryBlock[str]):
    """The session's summary and recall for the newest user message of the memory's session
    (``""`` when there is neither, or the memory has no session). ``summary=False`` leaves
    the summary out."""

    name: str = Field(default="AalisRecall", description="The name of the memory block.")
    platform: str | None = "llamaindex"
    summary: bool = True
    _host: Any = PrivateAttr()
    _bridge: LoopBridge = PrivateAttr()

    def __init__(self, host: Any, **data: Any) -> None:
        super().__init__(**data)
        self._host, self._bridge = host_and_bridge(host)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session_id = block_kwargs.get("session_id")
        history = list(messages or [])
        query = next((_text(m) for m in reversed(history) if m.role.value == "user"), "")
        if not isinstance(session_id, str) or not session_id:
            return ""
        shown = [Message(role=m.role.value, content=_text(m)) for m in history if _text(m)]

        async def collect() -> str:
            parts: list[str] = []
            summary = await self._summary(session_id) if self.summary else None
            if summary:
                parts.append(SUMMARY_HEADER + summary)
            if query:
                parts.extend(await self._recall(session_id, query, shown))
            return "\n\n".join(parts)

        return await self._bridge.call(collect)

    async def _summary(self, session_id: str) -> str | None:
        handle = self._host.capability(compression)
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(session_id)
        except Exception:
            return None  # a turn never fails for a summary
        return record.text if record is not None else None

    async def _recall(self, session_id: str, query: str, shown: list[Message]) -> list[str]:
        try:
            self._host.hook_impls("prompt_contributions")
        except ValueError:  # no loaded contract declares it
            return []
        request = PromptRequest(
            session_id=session_id, query=query, platform=self.platform, history=shown
        )
        return [b.content for b in await collect_prompt_blocks(self._host, request)]

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Nothing to do: the messages are in the Aalis session already (indexed as saved)."""


__all__ = ["AalisRecallBlock"]
