"""The Aalis embedding contract. Everything public is re-exported here."""

from aalis_api_embedding.capabilities import embedding
from aalis_api_embedding.embedder import (
    LEXICAL,
    SEMANTIC,
    Embedder,
    EmbedderKind,
    embedder_kind,
)
from aalis_api_embedding.errors import (
    EmbeddingConnectionError,
    EmbeddingError,
    EmbeddingRequestError,
    EmbeddingResponseError,
    EmbeddingServerError,
    EmbeddingTimeout,
    EmbeddingUnavailable,
)
from aalis_api_embedding.hashing import HashEmbedder
from aalis_api_embedding.validation import check_text, check_texts, check_vectors

__all__ = [
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
    "check_text",
    "check_texts",
    "check_vectors",
    "embedder_kind",
    "embedding",
]
