"""The Aalis llm contract. Everything public is re-exported here."""

from aalis_api_llm.capabilities import llm
from aalis_api_llm.errors import (
    LLMConnectionError,
    LLMError,
    LLMRateLimited,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeout,
)
from aalis_api_llm.model import ChatModel, ChatResult, TokenUsage

__all__ = [
    "ChatModel",
    "ChatResult",
    "LLMConnectionError",
    "LLMError",
    "LLMRateLimited",
    "LLMRequestError",
    "LLMResponseError",
    "LLMServerError",
    "LLMTimeout",
    "TokenUsage",
    "llm",
]
