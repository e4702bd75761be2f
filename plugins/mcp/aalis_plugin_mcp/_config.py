"""``[plugins.mcp]``: what ``aalis mcp`` lets an MCP client do.

Reading is always on; anything that changes the store is off until the owner of the
config says otherwise, because an MCP client is usually a model acting on its own.
"""

from __future__ import annotations

from typing import Any

import attrs

from aalis_core import positive_int


def _flag(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{attribute.name} must be true or false, got {value!r}")


@attrs.frozen(kw_only=True)
class McpConfig:
    #: Offer ``save_message``, ``save_metadata`` and ``delete_metadata``.
    allow_write: bool = attrs.field(default=False, validator=_flag)
    #: Offer ``clear_session`` (through ``run_clear``: every plugin's data for the session).
    allow_clear: bool = attrs.field(default=False, validator=_flag)
    #: Messages ``get_history`` returns when the client asks for none in particular.
    default_history_limit: int = attrs.field(default=50, validator=positive_int)
    #: The most messages one ``get_history`` call returns, whatever the client asks.
    max_history_limit: int = attrs.field(default=1000, validator=positive_int)
    #: ``metadata["platform"]`` of messages saved through ``save_message``.
    platform: str = "mcp"


__all__ = ["McpConfig"]
