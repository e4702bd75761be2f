"""LangChain adapter for Aalis memory (see docs/integrations/langchain.md)."""

from aalis_langchain.convert import AALIS_KEY, LANGCHAIN_KEY, from_aalis, to_aalis
from aalis_langchain.history import SUMMARY_PREFIX, AalisChatMessageHistory, ClearFailed

__all__ = [
    "AALIS_KEY",
    "LANGCHAIN_KEY",
    "SUMMARY_PREFIX",
    "AalisChatMessageHistory",
    "ClearFailed",
    "from_aalis",
    "to_aalis",
]
