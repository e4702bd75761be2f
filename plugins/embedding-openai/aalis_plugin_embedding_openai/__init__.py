"""Aalis embedder for OpenAI-compatible ``/embeddings`` endpoints."""

from aalis_plugin_embedding_openai.client import OpenAIEmbedder
from aalis_plugin_embedding_openai.config import EmbeddingOpenaiConfig
from aalis_plugin_embedding_openai.plugin import EmbeddingOpenai

__all__ = ["EmbeddingOpenai", "EmbeddingOpenaiConfig", "OpenAIEmbedder"]
