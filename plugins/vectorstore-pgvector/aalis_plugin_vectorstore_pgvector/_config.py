"""``[plugins.vectorstore-pgvector]``: where the server is, the pool, and the search effort.

``uri`` has no default: without one the plugin reports itself ``disabled`` instead of reaching
for a server nobody configured. The URI is never printed unredacted.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _check_uri(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"uri must be a string, got {type(value).__name__}")
    if not value.startswith(_SCHEMES):
        raise ValueError("uri must start with postgresql:// or postgres://")


def _check_schema(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"schema must be a string, got {type(value).__name__}")
    if _SCHEMA.fullmatch(value) is None or value.startswith("pg_"):
        raise ValueError(
            f"schema {value!r} must be 1-63 lower-case letters, digits or '_', not starting "
            "with a digit or 'pg_'"
        )


def _int_between(low: int, high: int) -> Any:
    def check(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
        if not low <= value <= high:
            raise ValueError(f"{attribute.name} must be between {low} and {high}, got {value}")

    return check


@attrs.frozen(kw_only=True)
class PgvectorConfig:
    """Settings of the pgvector store.

    ``ef_search`` is HNSW's candidate list per search (pgvector's ``hnsw.ef_search``; raised to
    ``k`` when smaller): larger finds more of the true top-k and costs more.
    ``max_scan_tuples`` bounds how far an iterative scan walks for a narrow filter before the
    store falls back to an exact scan of the rows in scope (docs/host/postgres.md).
    """

    uri: str | None = attrs.field(default=None, validator=_check_uri, repr=False)
    schema: str = attrs.field(default="aalis_vectors", validator=_check_schema)
    min_pool_size: int = attrs.field(default=1, validator=_int_between(0, 1000))
    max_pool_size: int = attrs.field(default=10, validator=_int_between(1, 1000))
    connect_timeout_s: int = attrs.field(default=10, validator=_int_between(1, 3600))
    ef_search: int = attrs.field(default=100, validator=_int_between(1, 1000))
    max_scan_tuples: int = attrs.field(default=20_000, validator=_int_between(1, 2**31 - 1))


__all__ = ["PgvectorConfig"]
