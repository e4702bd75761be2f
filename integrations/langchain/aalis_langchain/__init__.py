"""LangChain adapter for Aalis memory (see docs/integrations/langchain.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_langchain._convert import (
        AALIS_KEY as AALIS_KEY,
        LANGCHAIN_KEY as LANGCHAIN_KEY,
        from_aalis as from_aalis,
        to_aalis as to_aalis,
    )
    from aalis_langchain._history import (
        SUMMARY_PREFIX as SUMMARY_PREFIX,
        AalisChatMessageHistory as AalisChatMessageHistory,
        ClearFailed as ClearFailed,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_langchain._convert": "AALIS_KEY LANGCHAIN_KEY from_aalis to_aalis",
    "aalis_langchain._history": "AalisChatMessageHistory ClearFailed SUMMARY_PREFIX",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "AALIS_KEY",
    "LANGCHAIN_KEY",
    "SUMMARY_PREFIX",
    "AalisChatMessageHistory",
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
