"""LlamaIndex adapter for Aalis memory (see docs/integrations/llamaindex.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_llamaindex._chat_store import (
        AalisChatStore as AalisChatStore,
        ClearFailed as ClearFailed,
    )
    from aalis_llamaindex._convert import (
        AALIS_KEY as AALIS_KEY,
        LLAMAINDEX_KEY as LLAMAINDEX_KEY,
        from_aalis as from_aalis,
        to_aalis as to_aalis,
    )
    from aalis_llamaindex._db_chat_store import (
        AalisDBChatStore as AalisDBChatStore,
    )
    from aalis_llamaindex._recall_block import (
        AalisRecallBlock as AalisRecallBlock,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_llamaindex._chat_store": "AalisChatStore ClearFailed",
    "aalis_llamaindex._convert": "AALIS_KEY LLAMAINDEX_KEY from_aalis to_aalis",
    "aalis_llamaindex._db_chat_store": "AalisDBChatStore",
    "aalis_llamaindex._recall_block": "AalisRecallBlock",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

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
