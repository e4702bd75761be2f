"""The errors of the fact layer.

One base, so a consumer (the chat, ``aalis facts``, ``aalis serve``) can tell "the fact layer
refused or cannot do this" from a programming error. The tree of this package's classes
(under ``aalis_core._errors.AalisError``; the tree across every package is
docs/reference/errors.md)::

    RelationError
    ├── FactNotFound (LookupError)       no fact has this id (retract, edit, show)
    └── RelationUnavailable              the store behind the facts cannot be used
"""

from __future__ import annotations

from aalis_core import AalisError


class RelationError(AalisError):
    """Base class of the fact layer's errors."""


class FactNotFound(RelationError, LookupError):
    """No fact has this id; nothing changed."""

    def __init__(self, fact_id: str) -> None:
        super().__init__(f"no fact has the id {fact_id!r}")
        self.fact_id = fact_id


class RelationUnavailable(RelationError):
    """The store the facts live in is absent or failed; the message says which."""


__all__ = ["FactNotFound", "RelationError", "RelationUnavailable"]
