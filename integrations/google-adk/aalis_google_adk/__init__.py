"""Google ADK adapter for Aalis memory (see docs/integrations/google-adk.md)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_google_adk._memory_service import (
        AalisMemoryService as AalisMemoryService,
    )
    from aalis_google_adk._sessions import (
        APP_STATE as APP_STATE,
        EVENT_KEY as EVENT_KEY,
        AalisSessionService as AalisSessionService,
        aalis_session_id as aalis_session_id,
        event_to_message as event_to_message,
        message_to_event as message_to_event,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_google_adk._memory_service": "AalisMemoryService",
    "aalis_google_adk._sessions": (
        "APP_STATE AalisSessionService EVENT_KEY aalis_session_id event_to_message message_to_event"
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "APP_STATE",
    "EVENT_KEY",
    "AalisMemoryService",
    "AalisSessionService",
    "aalis_session_id",
    "event_to_message",
    "message_to_event",
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
