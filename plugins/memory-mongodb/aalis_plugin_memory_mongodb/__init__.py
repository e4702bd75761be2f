"""Aalis memory backend on MongoDB (pymongo's asyncio API).

``MemoryMongodb`` is the plugin (entry point ``memory-mongodb``); ``MongoMemory`` is the store,
usable on its own with ``await MongoMemory.connect(MongoConfig(uri=...))``.
"""

from aalis_plugin_memory_mongodb.config import MongoConfig
from aalis_plugin_memory_mongodb.plugin import MemoryMongodb
from aalis_plugin_memory_mongodb.store import MongoMemory, MongoUnavailable

__all__ = ["MemoryMongodb", "MongoConfig", "MongoMemory", "MongoUnavailable"]
