"""Pydantic AI adapter for Aalis memory (see docs/integrations/pydantic-ai.md)."""

from aalis_pydantic_ai.history import MESSAGE_KEY, AalisHistory, from_aalis, to_aalis

__all__ = ["MESSAGE_KEY", "AalisHistory", "from_aalis", "to_aalis"]
