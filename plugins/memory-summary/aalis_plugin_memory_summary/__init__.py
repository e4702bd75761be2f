"""Aalis compression provider ``memory-summary``: cumulative summaries of long sessions."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_memory_summary._config import (
        MemorySummaryConfig as MemorySummaryConfig,
    )
    from aalis_plugin_memory_summary._config import (
        PlatformProfile as PlatformProfile,
    )
    from aalis_plugin_memory_summary._plugin import (
        MemorySummary as MemorySummary,
    )
    from aalis_plugin_memory_summary._service import (
        CompressionOutcome as CompressionOutcome,
    )
    from aalis_plugin_memory_summary._service import (
        SummaryCompression as SummaryCompression,
    )

_EXPORTS: dict[str, str] = {
    "MemorySummaryConfig": "aalis_plugin_memory_summary._config",
    "PlatformProfile": "aalis_plugin_memory_summary._config",
    "MemorySummary": "aalis_plugin_memory_summary._plugin",
    "CompressionOutcome": "aalis_plugin_memory_summary._service",
    "SummaryCompression": "aalis_plugin_memory_summary._service",
}

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
