"""``[plugins.vectorstore-sqlite]``: validated at config-load time, before anything starts."""

from __future__ import annotations

from typing import Any, Literal

import attrs

Synchronous = Literal["NORMAL", "FULL"]
SYNCHRONOUS_MODES: tuple[str, ...] = ("NORMAL", "FULL")

#: Beside memory-sqlite's ``aalis.db`` in the data directory.
DEFAULT_PATH = "aalis-vectors.db"
DEFAULT_BUSY_TIMEOUT_MS = 5000


def _path(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"{attribute.name} must be a string (a file path), got {type(value).__name__}"
        )
    if not value.strip():
        raise ValueError(f"{attribute.name} must not be empty")
    if "\x00" in value:
        raise ValueError(f"{attribute.name} must not contain a NUL character")


def _synchronous(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


def _check_synchronous(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in SYNCHRONOUS_MODES:
        raise ValueError(
            f"{attribute.name} must be one of {', '.join(SYNCHRONOUS_MODES)}, got {value!r}"
        )


def _busy(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


@attrs.frozen(kw_only=True)
class SqliteVectorConfig:
    """Settings of the SQLite vector store.

    ``path`` is relative to the host's data directory (an absolute path is used as is); the
    default keeps the vectors in their own file beside the message store, so a vector index
    can be dropped and rebuilt without touching the history it was made from.
    """

    path: str = attrs.field(default=DEFAULT_PATH, validator=_path)
    synchronous: Synchronous = attrs.field(
        default="NORMAL", converter=_synchronous, validator=_check_synchronous
    )
    busy_timeout_ms: int = attrs.field(default=DEFAULT_BUSY_TIMEOUT_MS, validator=_busy)


__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "DEFAULT_PATH", "SqliteVectorConfig", "Synchronous"]
