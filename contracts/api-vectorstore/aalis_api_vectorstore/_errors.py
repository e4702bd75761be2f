"""The errors a ``VectorStore`` raises.

One base for every store, so a consumer (the recall of memory-vector) can tell "the store
cannot do this" from a programming error. The tree of this package's own classes (under
``aalis_core._errors.AalisError``; stores subclass them, and the tree across every package is
docs/reference/errors.md)::

    VectorStoreError
    ├── DimensionMismatch (ValueError)  a vector's width differs from its model's
    ├── VectorStoreUnavailable          the store cannot be reached or opened
    └── RecallUnavailable               aalis_api_vectorstore._recall: recall cannot run
"""

from __future__ import annotations

from aalis_core import AalisError


class VectorStoreError(AalisError):
    """Base class for a store that cannot do what was asked."""


class DimensionMismatch(VectorStoreError, ValueError):
    """A vector's width differs from the width the store holds for its ``model_id``.

    Raised before anything is written (a batch with one bad record writes nothing) or
    searched. It usually means the embedder changed without changing its ``model_id``.
    """

    def __init__(self, model_id: str, expected: int, got: int) -> None:
        super().__init__(
            f"vectors of model {model_id!r} have {expected} dimensions here, got one with {got}"
        )
        self.model_id = model_id
        self.expected = expected
        self.got = got


class VectorStoreUnavailable(VectorStoreError):
    """The store cannot be used at all: its file is corrupt, locked, read-only or from a
    newer schema, or its server is unreachable. The message says which."""


__all__ = ["DimensionMismatch", "VectorStoreError", "VectorStoreUnavailable"]
