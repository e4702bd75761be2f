"""LangGraph adapter for Aalis memory (see docs/integrations/langgraph.md)."""

from aalis_langgraph.saver import PREFIX, THREADS, AalisSaver, thread_namespace
from aalis_langgraph.store import REGISTRY, AalisStore, store_namespace

__all__ = [
    "PREFIX",
    "REGISTRY",
    "THREADS",
    "AalisSaver",
    "AalisStore",
    "store_namespace",
    "thread_namespace",
]
