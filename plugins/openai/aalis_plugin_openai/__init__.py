"""Aalis plugins for OpenAI-compatible endpoints: ``llm-openai`` (chat completions) and
``embedding-openai`` (``/embeddings``), over one HTTP layer (docs/host/openai.md)."""

from typing import TYPE_CHECKING, Any

from aalis_plugin_openai.config import EmbeddingOpenaiConfig, LlmOpenaiConfig
from aalis_plugin_openai.plugin import EmbeddingOpenai, LlmOpenai

if TYPE_CHECKING:
    from aalis_plugin_openai.embedding import OpenAIEmbedder
    from aalis_plugin_openai.llm import OpenAIChatModel


def __getattr__(name: str) -> Any:
    # Lazy: the clients pull in httpx, which the entry points must not pay for.
    if name == "OpenAIChatModel":
        from aalis_plugin_openai.llm import OpenAIChatModel

        return OpenAIChatModel
    if name == "OpenAIEmbedder":
        from aalis_plugin_openai.embedding import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EmbeddingOpenai",
    "EmbeddingOpenaiConfig",
    "LlmOpenai",
    "LlmOpenaiConfig",
    "OpenAIChatModel",
    "OpenAIEmbedder",
]
