"""The ``embedding-openai`` plugin: ``embedding`` from an OpenAI-compatible endpoint.

Disabled until ``base_url`` and ``model`` are configured. At start it learns the vector
width with one request (unless ``dimensions`` is set), so an unreachable endpoint or a wrong
model name is a plugin error at start, with the server's reason, not a failure later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aalis_api_embedding import embedding

from aalis_core.context import PluginContext
from aalis_core.plugin import Plugin, PluginDisabled
from aalis_plugin_embedding_openai.config import EmbeddingOpenaiConfig

if TYPE_CHECKING:
    from aalis_plugin_embedding_openai.client import OpenAIEmbedder


class EmbeddingOpenai(Plugin):
    """Provides an ``OpenAIEmbedder`` at the configured priority (default 20)."""

    name = "embedding-openai"
    label = "remote semantic: OpenAI-compatible /embeddings"
    provides = (embedding,)
    Config = EmbeddingOpenaiConfig

    def __init__(self) -> None:
        self.embedder: OpenAIEmbedder | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: EmbeddingOpenaiConfig = ctx.config  # validated by the host
        if not config.base_url or not config.model:
            raise PluginDisabled(
                "set base_url and model in [plugins.embedding-openai] to embed through an "
                "OpenAI-compatible endpoint"
            )
        # httpx is imported with the client, not with the plugin class, so ``aalis plugins``
        # does not pay for it.
        from aalis_plugin_embedding_openai.client import OpenAIEmbedder

        self.embedder = await OpenAIEmbedder.connect(config, logger=ctx.logger)
        ctx.logger.info(
            "embedding endpoint ready", model_id=self.embedder.model_id, dim=self.embedder.dim
        )
        ctx.provide(embedding, self.embedder, priority=config.priority)

    async def stop(self) -> None:
        embedder, self.embedder = self.embedder, None
        if embedder is not None:
            await embedder.aclose()


__all__ = ["EmbeddingOpenai"]
