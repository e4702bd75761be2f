"""Aalis ``llm`` provider for OpenAI-compatible chat-completions endpoints."""

from typing import TYPE_CHECKING, Any

from aalis_plugin_llm_openai.config import LlmOpenaiConfig
from aalis_plugin_llm_openai.plugin import LlmOpenai

if TYPE_CHECKING:
    from aalis_plugin_llm_openai.client import OpenAIChatModel


def __getattr__(name: str) -> Any:
    # Lazy: importing the client pulls in httpx, which the entry point must not pay for.
    if name == "OpenAIChatModel":
        from aalis_plugin_llm_openai.client import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LlmOpenai", "LlmOpenaiConfig", "OpenAIChatModel"]
