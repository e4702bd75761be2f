"""The two plugins of the distribution: ``llm-openai`` (provides ``llm``) and
``embedding-openai`` (provides ``embedding``), two entry points over one HTTP layer.

Why two plugins and not one ``openai``: the chat model and the embedding model are different
models, often on different servers, each configured, pinned (``llm = "llm-openai"``),
disabled and failing on its own; a wrong embedding model name must not take the chat model
down with it (docs/host/openai.md). Both are disabled, not in error, until ``base_url`` and
``model`` are set: installing the distribution must not break a setup that uses neither.

httpx is imported with the clients in ``start``, not here: every ``aalis`` command loads the
plugin classes, and only a started, configured plugin needs the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from aalis_api_embedding import embedding
from aalis_api_llm import llm

from aalis_core import Plugin, PluginDisabled
from aalis_plugin_openai._config import EmbeddingOpenaiConfig, LlmOpenaiConfig

if TYPE_CHECKING:
    from aalis_core import PluginContext
    from aalis_plugin_openai._embedding import OpenAIEmbedder
    from aalis_plugin_openai._llm import OpenAIChatModel


class LlmOpenai(Plugin):
    """Any OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp server, vLLM) as ``llm``."""

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
        from aalis_plugin_openai._llm import OpenAIChatModel

        self._model = OpenAIChatModel(config, logger=ctx.logger)
        ctx.provide(llm, self._model, priority=config.priority)
        ctx.logger.info("llm ready", model=self._model.id, context_window=config.context_window)

    async def stop(self) -> None:
        model, self._model = self._model, None
        if model is not None:
            await model.aclose()


class EmbeddingOpenai(Plugin):
    """Any OpenAI-compatible ``/embeddings`` as ``embedding``, at the configured priority
    (default 20). At start it learns the vector width with one request (unless
    ``dimensions`` is set), so an unreachable endpoint or a wrong model name is a plugin
    error at start, with the server's reason, not a failure later."""

    name = "embedding-openai"
    label = "remote semantic: OpenAI-compatible /embeddings"
    provides = (embedding,)
    Config: ClassVar[type[EmbeddingOpenaiConfig]] = EmbeddingOpenaiConfig

    def __init__(self) -> None:
        self.embedder: OpenAIEmbedder | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: EmbeddingOpenaiConfig = ctx.config  # validated by the host
        if not config.base_url or not config.model:
            raise PluginDisabled(
                "set base_url and model in [plugins.embedding-openai] to embed through an "
                "OpenAI-compatible endpoint"
            )
        from aalis_plugin_openai._embedding import OpenAIEmbedder

        self.embedder = await OpenAIEmbedder.connect(config, logger=ctx.logger)
        ctx.logger.info(
            "embedding endpoint ready", model_id=self.embedder.model_id, dim=self.embedder.dim
        )
        ctx.provide(embedding, self.embedder, priority=config.priority)

    async def stop(self) -> None:
        embedder, self.embedder = self.embedder, None
        if embedder is not None:
            await embedder.aclose()


__all__ = ["EmbeddingOpenai", "LlmOpenai"]
