"""The message schema shared by every Aalis contract and plugin."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_schema_message._message import (
        CONTROL_KINDS as CONTROL_KINDS,
        JSON as JSON,
        WELL_KNOWN_ROLES as WELL_KNOWN_ROLES,
        Message as Message,
        ToolCall as ToolCall,
        new_message_id as new_message_id,
        now_ms as now_ms,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_schema_message._message": (
        "CONTROL_KINDS JSON Message ToolCall WELL_KNOWN_ROLES new_message_id now_ms"
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "CONTROL_KINDS",
    "JSON",
    "WELL_KNOWN_ROLES",
    "Message",
    "ToolCall",
    "new_message_id",
    "now_ms",
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
