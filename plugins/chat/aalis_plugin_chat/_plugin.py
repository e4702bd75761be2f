"""The ``chat`` plugin: holds the chat's capability handles and adds ``aalis chat``.

The chat is a consumer like any other (consumer name ``chat``), so ``[consumers.chat]``
pins its ``memory``, ``llm`` and ``compression`` providers. The command runs inside the
CLI's host and borrows the started plugin's handles, which is what makes those pins apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_llm import llm
from aalis_api_memory import compression, memory
from aalis_api_vectorstore import recall

from aalis_core import Plugin, hookimpl
from aalis_plugin_chat._config import ChatConfig

if TYPE_CHECKING:
    from aalis_core import PluginContext
    from aalis_plugin_chat._session import ChatSession


class Chat(Plugin):
    name = "chat"
    uses: ClassVar[dict[str, Any]] = {
        "memory": memory,
        "llm": llm,
        "compression": compression,
        "recall": recall,
    }
    Config: ClassVar[type[ChatConfig]] = ChatConfig

    def __init__(self) -> None:
        self.ctx: PluginContext | None = None

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx

    async def stop(self) -> None:
        self.ctx = None

    def session(self, session_id: str) -> ChatSession:
        """A chat session on this plugin's handles; the plugin must be active."""
        ctx = self.ctx
        if ctx is None:
            raise RuntimeError("the chat plugin is not active")
        config: ChatConfig = ctx.config  # validated by the host
        # Imported at the first session, not at the plugin's start: it brings the agent's
        # turn machinery, which `aalis plugins` or `aalis history` never run.
        from aalis_plugin_chat._session import ChatSession

        return ChatSession(
            host=ctx.host, caps=ctx.caps, emit=ctx.emit, config=config, session_id=session_id
        )

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_chat._cli import chat_command

        cli.add_command(chat_command)


__all__ = ["Chat"]
