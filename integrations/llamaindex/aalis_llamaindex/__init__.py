"""LlamaIndex adapter for Aalis memory (see docs/integrations/llamaindex.md)."""

from aalis_llamaindex.chat_store import AalisChatStore, ClearFailed
from aalis_llamaindex.convert import AALIS_KEY, LLAMAINDEX_KEY, from_aalis, to_aalis
from aalis_llamaindex.db_chat_store import AalisDBChatStore
from aalis_llamaindex.recall_block import AalisRecallBlock

__all__ = [
    "AALIS_KEY",
    "LLAMAINDEX_KEY",
    "AalisChatStore",
    "AalisDBChatStore",
    "AalisRecallBlock",
    "ClearFailed",
    "from_aalis",
    "to_aalis",
]
