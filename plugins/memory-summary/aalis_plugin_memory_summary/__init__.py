"""Aalis compression provider ``memory-summary``: cumulative summaries of long sessions."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_memory_summary._config import (
        MemorySummaryConfig as MemorySummaryConfig,
        PlatformProfile as PlatformProfile,
    )
    from aalis_plugin_memory_summary._plugin import (
        MemorySummary as MemorySummary,
    )
    from aalis_plugin_memory_summary._service import (
        CompressionOutcome as CompressionOutcome,
        SummaryCompression as SummaryCompression,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_memory_summary._config": "MemorySummaryConfig PlatformProfile",
    "aalis_plugin_memory_summary._plugin": "MemorySummary",
    "aalis_plugin_memory_summary._service": "CompressionOutcome SummaryCompression",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "CompressionOutcome",
    "MemorySummary",
    "MemorySummaryConfig",
    "PlatformProfile",
    "SummaryCompression",
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
