"""``AalisRecallBlock``: a LlamaIndex ``Memory`` block with what Aalis recalls for the turn.

LlamaIndex's ``Memory`` asks each memory block for content before every model call and
puts it in the system prompt. This block asks the host's prompt contributors (semantic
recall from memory-vector, and any other plugin that contributes) for the newest user
message, in the memory's session: the same block ``aalis chat`` gets, with the same privacy
scope, dedup against the history and score floor (docs/integrations/llamaindex.md).
"""

from __future__ import annotations

from typing import Any

from aalis_agent import LoopBridge, PromptRequest, collect_prompt_blocks, host_and_bridge
from aalis_schema_message import Message
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr


def _text(message: ChatMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else ""


class AalisRecallBlock(BaseMemoryBlock[str]):
    """Recall for the newest user message of the memory's session (``""`` when nothing is
    recalled, no recall provider is active, or the memory has no session)."""

    name: str = Field(default="AalisRecall", description="The name of the memory block.")
    platform: str | None = "llamaindex"
    _host: Any = PrivateAttr()
    _bridge: LoopBridge = PrivateAttr()

    def __init__(self, host: Any, **data: Any) -> None:
        super().__init__(**data)
        self._host, self._bridge = host_and_bridge(host)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session_id = block_kwargs.get("session_id")
        history = list(messages or [])
        query = next((_text(m) for m in reversed(history) if m.role.value == "user"), "")
        if not isinstance(session_id, str) or not session_id or not query:
            return ""
        shown = [Message(role=m.role.value, content=_text(m)) for m in history if _text(m)]

        async def collect() -> str:
            try:
                self._host.hook_impls("prompt_contributions")
            except ValueError:  # no loaded contract declares it
                return ""
            request = PromptRequest(
                session_id=session_id, query=query, platform=self.platform, history=shown
            )
            blocks = await collect_prompt_blocks(self._host, request)
            return "\n\n".join(b.content for b in blocks)

        return await self._bridge.call(collect)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Nothing to do: the messages are in the Aalis session already (indexed as saved)."""


__all__ = ["AalisRecallBlock"]
