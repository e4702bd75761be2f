"""The ``llm-openai`` plugin: provides ``llm`` when an endpoint and a model are configured."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from aalis_api_llm import llm

from aalis_core.plugin import Plugin, PluginDisabled
from aalis_plugin_llm_openai.config import LlmOpenaiConfig

if TYPE_CHECKING:
    from aalis_core.context import PluginContext
    from aalis_plugin_llm_openai.client import OpenAIChatModel


class LlmOpenai(Plugin):
    """Any OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp server, vLLM) as ``llm``.

    Installed but unconfigured it is ``disabled`` rather than ``error``: installing the
    plugin must not break a setup that does not use a model yet.
    """

    name = "llm-openai"
    provides = (llm,)
    Config: ClassVar[type[LlmOpenaiConfig]] = LlmOpenaiConfig

    def __init__(self) -> None:
        self._model: OpenAIChatModel | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: LlmOpenaiConfig = ctx.config  # validated by the host
        if not config.base_url or not config.model:
            raise PluginDisabled(
                "not configured: [plugins.llm-openai] needs base_url and model "
                '(e.g. base_url = "http://127.0.0.1:11434/v1", model = "llama3.2")'
            )
        # httpx is imported here, not at module level: every ``aalis`` command loads the
        # plugin classes, and only a started, configured plugin needs the HTTP client.
        from aalis_plugin_llm_openai.client import OpenAIChatModel

        self._model = OpenAIChatModel(config, logger=ctx.logger)
        ctx.provide(llm, self._model, priority=config.priority)
        ctx.logger.info("llm ready", model=self._model.id, context_window=config.context_window)

    async def stop(self) -> None:
        model, self._model = self._model, None
        if model is not None:
            await model.aclose()


__all__ = ["LlmOpenai"]
