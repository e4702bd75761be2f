"""Aalis memory backend on MongoDB (pymongo's asyncio API).

``MemoryMongodb`` is the plugin (entry point ``memory-mongodb``); ``MongoMemory`` is the store,
usable on its own with ``await MongoMemory.connect(MongoConfig(uri=...))``.

Names are imported lazily: the host imports the plugin class of every installed plugin to list
it, and pymongo costs a few hundred milliseconds that only a configured MongoDB needs.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_memory_mongodb._config import (
        MongoConfig as MongoConfig,
    )
    from aalis_plugin_memory_mongodb._plugin import (
        MemoryMongodb as MemoryMongodb,
    )
    from aalis_plugin_memory_mongodb._store import (
        MongoMemory as MongoMemory,
        MongoUnavailable as MongoUnavailable,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_memory_mongodb._config": "MongoConfig",
    "aalis_plugin_memory_mongodb._plugin": "MemoryMongodb",
    "aalis_plugin_memory_mongodb._store": "MongoMemory MongoUnavailable",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "MemoryMongodb",
    "MongoConfig",
    "MongoMemory",
    "MongoUnavailable",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
