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
    )
    from aalis_api_llm._errors import (
        LLMError as LLMError,
    )
    from aalis_api_llm._errors import (
        LLMRateLimited as LLMRateLimited,
    )
    from aalis_api_llm._errors import (
        LLMRequestError as LLMRequestError,
    )
    from aalis_api_llm._errors import (
        LLMResponseError as LLMResponseError,
    )
    from aalis_api_llm._errors import (
        LLMServerError as LLMServerError,
    )
    from aalis_api_llm._errors import (
        LLMTimeout as LLMTimeout,
    )
    from aalis_api_llm._model import (
        ChatModel as ChatModel,
    )
    from aalis_api_llm._model import (
        ChatResult as ChatResult,
    )
    from aalis_api_llm._model import (
        TokenUsage as TokenUsage,
    )

_EXPORTS: dict[str, str] = {
    "llm": "aalis_api_llm._capabilities",
    "LLMConnectionError": "aalis_api_llm._errors",
    "LLMError": "aalis_api_llm._errors",
    "LLMRateLimited": "aalis_api_llm._errors",
    "LLMRequestError": "aalis_api_llm._errors",
    "LLMResponseError": "aalis_api_llm._errors",
    "LLMServerError": "aalis_api_llm._errors",
    "LLMTimeout": "aalis_api_llm._errors",
    "ChatModel": "aalis_api_llm._model",
    "ChatResult": "aalis_api_llm._model",
    "TokenUsage": "aalis_api_llm._model",
}

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
