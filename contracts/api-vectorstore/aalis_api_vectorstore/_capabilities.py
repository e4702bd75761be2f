"""The capability descriptors this contract declares: ``vectorstore`` and ``recall``."""

from __future__ import annotations

from aalis_api_vectorstore._recall import Recall
from aalis_api_vectorstore._store import VectorStore
from aalis_core import Capability

vectorstore: Capability[VectorStore] = Capability("vectorstore", VectorStore)
recall: Capability[Recall] = Capability("recall", Recall)

__all__ = ["recall", "vectorstore"]
