"""The Aalis embedding contract. Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_embedding._capabilities import (
        embedding as embedding,
    )
    from aalis_api_embedding._embedder import (
        LEXICAL as LEXICAL,
        SEMANTIC as SEMANTIC,
        Embedder as Embedder,
        EmbedderKind as EmbedderKind,
        QueryBatch as QueryBatch,
        embed_queries as embed_queries,
        embedder_kind as embedder_kind,
    )
    from aalis_api_embedding._errors import (
        EmbeddingConnectionError as EmbeddingConnectionError,
        EmbeddingError as EmbeddingError,
        EmbeddingRequestError as EmbeddingRequestError,
        EmbeddingResponseError as EmbeddingResponseError,
        EmbeddingServerError as EmbeddingServerError,
        EmbeddingTimeout as EmbeddingTimeout,
        EmbeddingUnavailable as EmbeddingUnavailable,
    )
    from aalis_api_embedding._hashing import (
        DEFAULT_DIM as DEFAULT_DIM,
        DEFAULT_NGRAMS as DEFAULT_NGRAMS,
        HashEmbedder as HashEmbedder,
    )
    from aalis_api_embedding._validation import (
        check_text as check_text,
        check_texts as check_texts,
        check_vectors as check_vectors,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_api_embedding._capabilities": "embedding",
    "aalis_api_embedding._embedder": (
        "Embedder EmbedderKind LEXICAL QueryBatch SEMANTIC embed_queries embedder_kind"
    ),
    "aalis_api_embedding._errors": (
        "EmbeddingConnectionError EmbeddingError EmbeddingRequestError "
        "EmbeddingResponseError EmbeddingServerError EmbeddingTimeout "
        "EmbeddingUnavailable"
    ),
    "aalis_api_embedding._hashing": "DEFAULT_DIM DEFAULT_NGRAMS HashEmbedder",
    "aalis_api_embedding._validation": "check_text check_texts check_vectors",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_NGRAMS",
    "LEXICAL",
    "SEMANTIC",
    "Embedder",
    "EmbedderKind",
    "EmbeddingConnectionError",
    "EmbeddingError",
    "EmbeddingRequestError",
    "EmbeddingResponseError",
    "EmbeddingServerError",
    "EmbeddingTimeout",
    "EmbeddingUnavailable",
    "HashEmbedder",
    "QueryBatch",
    "check_text",
    "check_texts",
    "check_vectors",
    "embed_queries",
    "embedder_kind",
    "embedding",
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
