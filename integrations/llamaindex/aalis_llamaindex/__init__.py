"""LlamaIndex adapter for Aalis memory (see docs/integrations/llamaindex.md)."""

from aalis_llamaindex.chat_store import AalisChatStore, ClearFailed
from aalis_llamaindex.convert import AALIS_KEY, LLAMAINDEX_KEY, from_aalis, to_aalis

__all__ = ["AALIS_KEY", "LLAMAINDEX_KEY", "AalisChatStore", "ClearFailed", "from_aalis", "to_aalis"]
