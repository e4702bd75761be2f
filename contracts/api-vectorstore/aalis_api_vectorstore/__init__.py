"""The Aalis vectorstore and recall contracts. Everything public is re-exported here."""

from aalis_api_vectorstore.capabilities import recall, vectorstore
from aalis_api_vectorstore.errors import (
    DimensionMismatch,
    VectorStoreError,
    VectorStoreUnavailable,
)
from aalis_api_vectorstore.inmemory import InMemoryVectorStore
from aalis_api_vectorstore.recall import Recall, RecallHit, RecallUnavailable
from aalis_api_vectorstore.store import DroppedSessions, VectorStore
from aalis_api_vectorstore.types import (
    ModelStats,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorKey,
    VectorRecord,
    VectorStoreStats,
)

__all__ = [
    "DimensionMismatch",
    "DroppedSessions",
    "InMemoryVectorStore",
    "ModelStats",
    "Recall",
    "RecallHit",
    "RecallUnavailable",
    "ScopeFilter",
    "VectorEntry",
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
