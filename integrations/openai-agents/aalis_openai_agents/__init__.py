"""OpenAI Agents SDK adapter for Aalis memory (see docs/integrations/openai-agents.md)."""

from aalis_openai_agents.convert import ITEM_KEY, item_to_message, message_to_items
from aalis_openai_agents.session import AalisSession, ClearFailed

__all__ = ["ITEM_KEY", "AalisSession", "ClearFailed", "item_to_message", "message_to_items"]
