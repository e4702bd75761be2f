"""The message schema shared by every Aalis contract and plugin."""

from aalis_schema_message.message import (
    CONTROL_KINDS,
    JSON,
    WELL_KNOWN_ROLES,
    Message,
    ToolCall,
    new_message_id,
    now_ms,
)

__all__ = [
    "CONTROL_KINDS",
    "JSON",
    "WELL_KNOWN_ROLES",
    "Message",
    "ToolCall",
    "new_message_id",
    "now_ms",
]
