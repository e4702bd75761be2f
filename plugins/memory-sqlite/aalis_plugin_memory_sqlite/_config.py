"""``[plugins.memory-sqlite]``: validated at config-load time, before anything starts.

Validators raise ``TypeError``/``ValueError`` naming the key and what was expected, so the
host can report ``aalis.toml: [plugins.memory-sqlite] busy_timeout_ms: ...`` and start nothing.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from aalis_api_memory import DEFAULT_CROSS_SESSION_MAX_LIMIT, DEFAULT_RANGE_QUERY_LIMIT

Synchronous = Literal["NORMAL", "FULL"]
SYNCHRONOUS_MODES: tuple[str, ...] = ("NORMAL", "FULL")

DEFAULT_PATH = "aalis.db"
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
    # Accept "normal"/"full" as SQLite itself does; the stored value is canonical.
    return value.upper() if isinstance(value, str) else value


def _check_synchronous(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in SYNCHRONOUS_MODES:
        raise ValueError(
            f"{attribute.name} must be one of {', '.join(SYNCHRONOUS_MODES)}, got {value!r}"
        )


def _int_at_least(minimum: int) -> Any:
    def check(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
        if value < minimum:
            raise ValueError(f"{attribute.name} must be at least {minimum}, got {value}")

    return check


@attrs.frozen(kw_only=True)
class SqliteConfig:
    """Settings of the SQLite memory backend.

    ``path`` is relative to the host's data directory (an absolute path is used as is).
    ``synchronous``: ``NORMAL`` (default) never corrupts the file and, in WAL mode, loses no
    write that a *process* crash interrupts; ``FULL`` also survives a power cut or an OS crash,
    at the price of an fsync per commit.
    """

    path: str = attrs.field(default=DEFAULT_PATH, validator=_path)
    synchronous: Synchronous = attrs.field(
        default="NORMAL", converter=_synchronous, validator=_check_synchronous
    )
    busy_timeout_ms: int = attrs.field(default=DEFAULT_BUSY_TIMEOUT_MS, validator=_int_at_least(0))
    range_query_limit: int = attrs.field(
        default=DEFAULT_RANGE_QUERY_LIMIT, validator=_int_at_least(1)
    )
    cross_session_max_limit: int = attrs.field(
        default=DEFAULT_CROSS_SESSION_MAX_LIMIT, validator=_int_at_least(1)
    )


__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_PATH",
    "SYNCHRONOUS_MODES",
    "SqliteConfig",
    "Synchronous",
]
