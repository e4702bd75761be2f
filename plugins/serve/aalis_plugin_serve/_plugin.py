"""The ``serve`` plugin: its handles, the event fan-out, and the ``aalis serve`` command.

It is a consumer like the chat (consumer name ``serve``); ``history_changed`` events from any
plugin of the same host reach the pages subscribed to the event stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_memory import compression, memory
from aalis_api_relation import relation
from aalis_api_vectorstore import recall

from aalis_core import Plugin, hookimpl
from aalis_plugin_serve._broker import EventBroker
from aalis_plugin_serve._config import ServeConfig

if TYPE_CHECKING:
    from aalis_core import PluginContext


class Serve(Plugin):
    name = "serve"
    uses: ClassVar[dict[str, Any]] = {
        "memory": memory,
        "compression": compression,
        "recall": recall,
        "relation": relation,
    }
    Config: ClassVar[type[ServeConfig]] = ServeConfig

    def __init__(self) -> None:
        self.ctx: PluginContext | None = None
        self.broker = EventBroker()

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        self.broker = EventBroker(self.config.client_queue)

    async def stop(self) -> None:
        self.ctx = None

    @property
    def config(self) -> ServeConfig:
        """``[plugins.serve]`` as the host validated it (the defaults before ``start``)."""
        if self.ctx is None:
            return ServeConfig()
        config: ServeConfig = self.ctx.config
        return config

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.broker.publish("history_changed", session_id)

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_serve._cli import serve_command

        cli.add_command(serve_command)


__all__ = ["Serve"]
