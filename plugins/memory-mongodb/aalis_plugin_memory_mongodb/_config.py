"""``[plugins.memory-mongodb]``: where the server is and how the store behaves.

``uri`` has no default on purpose: the plugin is installed with every Aalis set-up that wants
it, but it must not try to reach ``localhost:27017`` on a machine that never asked for MongoDB,
so without a URI ``start`` reports the plugin ``disabled``. Put the URI in an environment
variable (``uri = "${AALIS_MONGODB_URI}"``); the host substitutes it, and it is redacted
wherever it is printed.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from aalis_api_memory import DEFAULT_CROSS_SESSION_MAX_LIMIT, DEFAULT_RANGE_QUERY_LIMIT

_SCHEMES = ("mongodb://", "mongodb+srv://")
# MongoDB refuses these in database names (any platform), and names are at most 63 bytes.
_DATABASE_FORBIDDEN = set('/\\. "$*<>:|?\x00')
# Portable collection names: MongoDB allows more, but the nx-27017 test server (and tools
# that split "db.collection" on dots) do not; a prefix needs nothing else.
_PREFIX = re.compile(r"[A-Za-z0-9_\-]*")
# Timeouts and caps travel as 32-bit ints in driver options and commands.
_MAX_INT = 2**31 - 1


def _check_uri(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # Never echo the value: it usually carries a password.
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"uri must be a string, got {type(value).__name__}")
    if not value.startswith(_SCHEMES):
        raise ValueError("uri must start with mongodb:// or mongodb+srv://")


def _check_database(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"database must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError("database must not be empty")
    bad = sorted(set(value) & _DATABASE_FORBIDDEN)
    if bad:
        raise ValueError(f"database name {value!r} contains characters MongoDB refuses: {bad!r}")
    if len(value.encode("utf-8")) > 63:
        raise ValueError("database name must be at most 63 bytes")


def _check_prefix(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"collection_prefix must be a string, got {type(value).__name__}")
    if _PREFIX.fullmatch(value) is None:
        raise ValueError("collection_prefix may hold only letters, digits, '_' and '-'")
    if len(value) > 64:
        raise ValueError("collection_prefix must be at most 64 characters")


def _positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")
    if value > _MAX_INT:
        raise ValueError(f"{attribute.name} must be at most {_MAX_INT}, got {value}")


@attrs.frozen(kw_only=True)
class MongoConfig:
    """Settings of the MongoDB memory backend; every field is validated on construction.

    ``connect_timeout_ms`` bounds opening one connection, ``server_selection_timeout_ms``
    bounds waiting for a usable server; start-up fails after about the latter when the server
    cannot be reached, rather than hanging the host.
    """

    uri: str | None = attrs.field(default=None, validator=_check_uri, repr=False)
    database: str = attrs.field(default="aalis", validator=_check_database)
    collection_prefix: str = attrs.field(default="aalis_", validator=_check_prefix)
    connect_timeout_ms: int = attrs.field(default=5000, validator=_positive_int)
    server_selection_timeout_ms: int = attrs.field(default=5000, validator=_positive_int)
    range_query_limit: int = attrs.field(default=DEFAULT_RANGE_QUERY_LIMIT, validator=_positive_int)
    cross_session_max_limit: int = attrs.field(
        default=DEFAULT_CROSS_SESSION_MAX_LIMIT, validator=_positive_int
    )


__all__ = ["MongoConfig"]
