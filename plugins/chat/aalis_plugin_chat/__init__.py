"""Aalis plugin ``chat``: the ``aalis chat`` main job."""

from aalis_plugin_chat.config import ChatConfig
from aalis_plugin_chat.plugin import Chat
from aalis_plugin_chat.session import ChatSession, Reply
from aalis_plugin_chat.standin import StandInModel

__all__ = ["Chat", "ChatConfig", "ChatSession", "Reply", "StandInModel"]
