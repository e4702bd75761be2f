"""The Aalis llm contract. Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_llm._capabilities import (
        llm as llm,
    )
    from aalis_api_llm._errors import (
        LLMConnectionError as LLMConnectionError,
        LLMError as LLMError,
        LLMRateLimited as LLMRateLimited,
        LLMRequestError as LLMRequestError,
        LLMResponseError as LLMResponseError,
        LLMServerError as LLMServerError,
        LLMTimeout as LLMTimeout,
    )
    from aalis_api_llm._model import (
        ChatModel as ChatModel,
        ChatResult as ChatResult,
        TokenUsage as TokenUsage,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_api_llm._capabilities": "llm",
    "aalis_api_llm._errors": (
        "LLMConnectionError LLMError LLMRateLimited LLMRequestError "
        "LLMResponseError LLMServerError LLMTimeout"
    ),
    "aalis_api_llm._model": "ChatModel ChatResult TokenUsage",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "ChatModel",
    "ChatResult",
    "LLMConnectionError",
    "LLMError",
    "LLMRateLimited",
    "LLMRequestError",
    "LLMResponseError",
    "LLMServerError",
    "LLMTimeout",
    "TokenUsage",
    "llm",
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
