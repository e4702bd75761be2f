"""The reference memory backend, in process memory (plugin ``memory-inmemory``)."""

from aalis_plugin_memory_inmemory.config import InMemoryConfig
from aalis_plugin_memory_inmemory.plugin import MemoryInmemory
from aalis_plugin_memory_inmemory.store import InMemoryMemory

__all__ = ["InMemoryConfig", "InMemoryMemory", "MemoryInmemory"]
