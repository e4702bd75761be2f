"""The memory layer's errors: one base under ``aalis_core._errors.AalisError``.

A consumer can catch ``AalisMemoryError`` for "memory refused or could not do this", or
``BackendError`` for "the storage behind it failed", without knowing which backend runs.
Backends raise the shared classes below (``StoreClosed``, ``SchemaTooNew``...) rather than
defining their own, so one ``except`` clause works on every backend; their old names stay
importable from the backend packages. Classes keep a built-in base where callers already
catch one (``TransferError`` is a ``ValueError``).

The tree of this package's own classes (``tests/test_errors.py`` checks that it names exactly
them, under their real parents). Backends, memory-summary and the framework adapters subclass
these; the tree across every package is docs/reference/errors.md::

    AalisMemoryError
    ├── BackendError                        the storage behind the contract failed
    │   ├── StoreClosed (RuntimeError)      the store is not open (never opened, or closed)
    │   ├── BackendUnavailable (RuntimeError)  the server or file cannot be reached or prepared
    │   ├── SchemaTooNew (RuntimeError)     written by a newer version; using it could damage it
    │   └── StoredDataError (ValueError)    a stored value this backend did not write
    ├── MessageIdConflict (ValueError)      a message id the store already holds
    ├── ArchiveConflict                     the snapshot is stale
    ├── CompressionError                    a compression did not commit
    ├── LeaseWaitTimeout                    another holder kept the lease
    ├── LeaseFailed                         the store did not answer for a lease
    └── UnknownClearType (ValueError)       no such clear type
"""

from __future__ import annotations

from aalis_core import AalisError


class AalisMemoryError(AalisError):
    """Base class of the memory layer's errors."""


class BackendError(AalisMemoryError):
    """The storage behind the memory contract failed (not the caller's input)."""


class StoreClosed(BackendError, RuntimeError):
    """The store is not open (never opened, or closed)."""


class BackendUnavailable(BackendError, RuntimeError):
    """The server or file cannot be reached, opened or prepared; the message is redacted."""


class SchemaTooNew(BackendError, RuntimeError):
    """The data was written by a newer version of the backend; using it could damage it."""


class StoredDataError(BackendError, ValueError):
    """A stored value the backend did not write (hand-edited, or another tool's)."""


class MessageIdConflict(AalisMemoryError, ValueError):
    """A save or import named a message id the store already holds; nothing was written.

    Ids are unique in the whole store (docs/reference/memory-contract.md, "Message
    identity"); re-importing a file is idempotent because the transfer engine compares
    before it writes, not because the store ignores a second write of an id.
    """


__all__ = [
    "AalisMemoryError",
    "BackendError",
    "BackendUnavailable",
    "MessageIdConflict",
    "SchemaTooNew",
    "StoreClosed",
    "StoredDataError",
]
