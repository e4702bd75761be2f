"""Pydantic AI adapter for Aalis memory (see docs/integrations/pydantic-ai.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_pydantic_ai._history import (
        MESSAGE_KEY as MESSAGE_KEY,
        AalisHistory as AalisHistory,
        from_aalis as from_aalis,
        to_aalis as to_aalis,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_pydantic_ai._history": "AalisHistory MESSAGE_KEY from_aalis to_aalis",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "MESSAGE_KEY",
    "AalisHistory",
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
