"""Aalis ``llm`` provider for OpenAI-compatible chat-completions endpoints."""

from aalis_plugin_llm_openai.client import OpenAIChatModel
from aalis_plugin_llm_openai.config import LlmOpenaiConfig
from aalis_plugin_llm_openai.plugin import LlmOpenai

__all__ = ["LlmOpenai", "LlmOpenaiConfig", "OpenAIChatModel"]
