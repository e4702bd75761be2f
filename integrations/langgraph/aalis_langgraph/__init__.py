"""LangGraph adapter for Aalis memory (see docs/integrations/langgraph.md)."""

from aalis_langgraph.saver import PREFIX, THREADS, AalisSaver, thread_namespace

__all__ = ["PREFIX", "THREADS", "AalisSaver", "thread_namespace"]
