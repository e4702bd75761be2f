"""OpenAI Agents SDK adapter for Aalis memory (see docs/integrations/openai-agents.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_openai_agents._convert import (
        ITEM_KEY as ITEM_KEY,
        item_to_message as item_to_message,
        message_to_items as message_to_items,
    )
    from aalis_openai_agents._session import (
        AalisSession as AalisSession,
        ClearFailed as ClearFailed,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_openai_agents._convert": "ITEM_KEY item_to_message message_to_items",
    "aalis_openai_agents._session": "AalisSession ClearFailed",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "ITEM_KEY",
    "AalisSession",
    "ClearFailed",
    "item_to_message",
    "message_to_items",
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
