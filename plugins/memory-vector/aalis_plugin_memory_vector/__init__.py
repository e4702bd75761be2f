"""Semantic recall of earlier messages for Aalis (the ``memory-vector`` plugin)."""

from aalis_plugin_memory_vector.plugin import VECTOR_CLEAR_TYPE, MemoryVector

__all__ = ["VECTOR_CLEAR_TYPE", "MemoryVector"]
