"""``[plugins.memory-inmemory]``: the query caps of the memory contract, validated at load time."""

from __future__ import annotations

import attrs
from aalis_api_memory import DEFAULT_CROSS_SESSION_MAX_LIMIT, DEFAULT_RANGE_QUERY_LIMIT

_positive_int = [attrs.validators.instance_of(int), attrs.validators.gt(0)]


@attrs.frozen(kw_only=True)
class InMemoryConfig:
    """``[plugins.memory-inmemory]``: the query caps of the memory contract."""

    range_query_limit: int = attrs.field(default=DEFAULT_RANGE_QUERY_LIMIT, validator=_positive_int)
    cross_session_max_limit: int = attrs.field(
        default=DEFAULT_CROSS_SESSION_MAX_LIMIT, validator=_positive_int
    )


__all__ = ["InMemoryConfig"]
