"""Aalis memory backend on MongoDB (pymongo's asyncio API).

``MemoryMongodb`` is the plugin (entry point ``memory-mongodb``); ``MongoMemory`` is the store,
usable on its own with ``await MongoMemory.connect(MongoConfig(uri=...))``.

Names are imported lazily: the host imports the plugin class of every installed plugin to list
it, and pymongo costs a few hundred milliseconds that only a configured MongoDB needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aalis_plugin_memory_mongodb.config import MongoConfig
    from aalis_plugin_memory_mongodb.plugin import MemoryMongodb
    from aalis_plugin_memory_mongodb.store import MongoMemory, MongoUnavailable

_EXPORTS = {
    "MemoryMongodb": "aalis_plugin_memory_mongodb.plugin",
    "MongoConfig": "aalis_plugin_memory_mongodb.config",
    "MongoMemory": "aalis_plugin_memory_mongodb.store",
    "MongoUnavailable": "aalis_plugin_memory_mongodb.store",
}

__all__ = ["MemoryMongodb", "MongoConfig", "MongoMemory", "MongoUnavailable"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
