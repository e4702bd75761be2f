"""Aalis plugins for OpenAI-compatible endpoints: ``llm-openai`` (chat completions) and
``embedding-openai`` (``/embeddings``), over one HTTP layer (docs/host/openai.md).
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_plugin_openai._config import (
        EmbeddingOpenaiConfig as EmbeddingOpenaiConfig,
        LlmOpenaiConfig as LlmOpenaiConfig,
    )
    from aalis_plugin_openai._embedding import (
        OpenAIEmbedder as OpenAIEmbedder,
    )
    from aalis_plugin_openai._llm import (
        OpenAIChatModel as OpenAIChatModel,
    )
    from aalis_plugin_openai._plugin import (
        EmbeddingOpenai as EmbeddingOpenai,
        LlmOpenai as LlmOpenai,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_plugin_openai._config": "EmbeddingOpenaiConfig LlmOpenaiConfig",
    "aalis_plugin_openai._embedding": "OpenAIEmbedder",
    "aalis_plugin_openai._llm": "OpenAIChatModel",
    "aalis_plugin_openai._plugin": "EmbeddingOpenai LlmOpenai",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "EmbeddingOpenai",
    "EmbeddingOpenaiConfig",
    "LlmOpenai",
    "LlmOpenaiConfig",
    "OpenAIChatModel",
    "OpenAIEmbedder",
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
