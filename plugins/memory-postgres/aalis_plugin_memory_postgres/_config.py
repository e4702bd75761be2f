"""``[plugins.memory-postgres]``: where the server is, the pool, and how the store behaves.

``uri`` has no default on purpose: the plugin is installed with every Aalis set-up that wants
it, but it must not try to reach a local server on a machine that never asked for PostgreSQL,
so without a URI ``start`` reports the plugin ``disabled``. Put the URI in an environment
variable (``uri = "${AALIS_POSTGRES_URI}"``); the host substitutes it, and it is redacted
wherever it is printed. Pool sizing is discussed in docs/host/postgres.md.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from aalis_api_memory import DEFAULT_CROSS_SESSION_MAX_LIMIT, DEFAULT_RANGE_QUERY_LIMIT

_SCHEMES = ("postgresql://", "postgres://")
# An unquoted PostgreSQL identifier, lower case (the server folds unquoted names), at most
# 63 bytes; a schema name needs nothing else and stays easy to type in psql.
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_MAX_INT = 2**31 - 1


def _check_uri(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # Never echo the value: it usually carries a password.
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


def _positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")
    if value > _MAX_INT:
        raise ValueError(f"{attribute.name} must be at most {_MAX_INT}, got {value}")


def _non_negative_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be at least 0, got {value}")


def _pool_bounds(inst: PostgresConfig, attribute: attrs.Attribute[Any], value: int) -> None:
    if inst.min_pool_size > value:
        raise ValueError(
            f"max_pool_size ({value}) must be at least min_pool_size ({inst.min_pool_size})"
        )


@attrs.frozen(kw_only=True)
class PostgresConfig:
    """Settings of the PostgreSQL memory backend; every field is validated on construction.

    ``schema`` holds this backend's tables (created on first start, migrated forward on later
    ones); several Aalis deployments may share one database with different schemas.
    ``min_pool_size``/``max_pool_size`` bound the connections one process keeps open;
    ``connect_timeout_s`` bounds start-up when the server cannot be reached, rather than
    hanging the host; a schema migration (this host's or another's) is waited for however
    long it takes, since giving up would only roll it back.
    """

    uri: str | None = attrs.field(default=None, validator=_check_uri, repr=False)
    schema: str = attrs.field(default="aalis", validator=_check_schema)
    min_pool_size: int = attrs.field(default=1, validator=_non_negative_int)
    max_pool_size: int = attrs.field(default=10, validator=[_positive_int, _pool_bounds])
    connect_timeout_s: int = attrs.field(default=10, validator=_positive_int)
    range_query_limit: int = attrs.field(default=DEFAULT_RANGE_QUERY_LIMIT, validator=_positive_int)
    cross_session_max_limit: int = attrs.field(
        default=DEFAULT_CROSS_SESSION_MAX_LIMIT, validator=_positive_int
    )


__all__ = ["PostgresConfig"]
