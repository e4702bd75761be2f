"""LangGraph adapter for Aalis memory (see docs/integrations/langgraph.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_langgraph._clearing import LangGraphThreads as LangGraphThreads
    from aalis_langgraph._context import (
        CONTEXT_KEY as CONTEXT_KEY,
        amemory_context as amemory_context,
        memory_context as memory_context,
    )
    from aalis_langgraph._layout import (
        PREFIX as PREFIX,
        THREADS as THREADS,
        thread_namespace as thread_namespace,
    )
    from aalis_langgraph._saver import AalisSaver as AalisSaver
    from aalis_langgraph._store import (
        REGISTRY as REGISTRY,
        AalisStore as AalisStore,
        store_namespace as store_namespace,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_langgraph._clearing": "LangGraphThreads",
    "aalis_langgraph._context": "CONTEXT_KEY amemory_context memory_context",
    "aalis_langgraph._layout": "PREFIX THREADS thread_namespace",
    "aalis_langgraph._saver": "AalisSaver",
    "aalis_langgraph._store": "AalisStore REGISTRY store_namespace",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "CONTEXT_KEY",
    "PREFIX",
    "REGISTRY",
    "THREADS",
    "AalisSaver",
    "AalisStore",
    "LangGraphThreads",
    "amemory_context",
    "memory_context",
    "store_namespace",
    "thread_namespace",
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
