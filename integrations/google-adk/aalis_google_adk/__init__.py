"""Google ADK adapter for Aalis memory (see docs/integrations/google-adk.md)."""

from aalis_google_adk.memory_service import AalisMemoryService
from aalis_google_adk.sessions import (
    APP_STATE,
    EVENT_KEY,
    AalisSessionService,
    aalis_session_id,
    event_to_message,
    message_to_event,
)

__all__ = [
    "APP_STATE",
    "EVENT_KEY",
    "AalisMemoryService",
    "AalisSessionService",
    "aalis_session_id",
    "event_to_message",
    "message_to_event",
]
