"""Aalis embedder for OpenAI-compatible ``/embeddings`` endpoints."""

from typing import TYPE_CHECKING

from aalis_plugin_embedding_openai.config import EmbeddingOpenaiConfig
from aalis_plugin_embedding_openai.plugin import EmbeddingOpenai

if TYPE_CHECKING:
    from aalis_plugin_embedding_openai.client import OpenAIEmbedder

__all__ = ["EmbeddingOpenai", "EmbeddingOpenaiConfig", "OpenAIEmbedder"]


def __getattr__(name: str) -> object:
    # The client pulls in httpx; keep the package import light for ``aalis plugins``.
    if name == "OpenAIEmbedder":
        from aalis_plugin_embedding_openai.client import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(name)
