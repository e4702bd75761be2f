"""The Aalis vectorstore and recall contracts. Everything public is re-exported here."""

from aalis_api_vectorstore.capabilities import recall, vectorstore
from aalis_api_vectorstore.errors import (
    DimensionMismatch,
    VectorStoreError,
    VectorStoreUnavailable,
)
from aalis_api_vectorstore.inmemory import InMemoryVectorStore
from aalis_api_vectorstore.recall import Recall, RecallHit, RecallUnavailable
from aalis_api_vectorstore.store import VectorStore
from aalis_api_vectorstore.types import (
    ModelStats,
    ScopeFilter,
    VectorHit,
    VectorKey,
    VectorRecord,
    VectorStoreStats,
)

__all__ = [
    "DimensionMismatch",
    "InMemoryVectorStore",
    "ModelStats",
    "Recall",
    "RecallHit",
    "RecallUnavailable",
    "ScopeFilter",
    "VectorHit",
    "VectorKey",
    "VectorRecord",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreStats",
    "VectorStoreUnavailable",
    "recall",
    "vectorstore",
]
