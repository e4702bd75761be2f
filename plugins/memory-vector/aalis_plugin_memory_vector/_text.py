"""What gets indexed, and the text that is embedded for it."""

from __future__ import annotations

from aalis_schema_message import CONTROL_KINDS, Message

#: Only what the people in the conversation said is recalled: tool output, notices and
#: markers are not memories, and a tool-call preamble is the model thinking aloud.
INDEXED_ROLES = frozenset({"user", "assistant"})


def indexable(message: Message) -> bool:
    """True for a user or assistant message with text, no tool calls, no control kind, not
    a prompt block some plugin added, not opted out (``metadata["no_recall"] is True``, which
    the chat sets on its offline stand-in's echoes), and a timestamp (the key of its vector)."""
    if message.role not in INDEXED_ROLES or message.timestamp is None:
        return False
    if message.tool_calls or message.kind in CONTROL_KINDS:
        return False
    metadata = message.metadata or {}
    if "prompt_contribution" in metadata or metadata.get("no_recall") is True:
        return False
    return isinstance(message.content, str) and bool(message.content.strip())


def key_of(session_id: str, message: Message) -> str:
    """The key of a message's vector: its id (``Message.id``). A message from a store
    without identity has none; it gets a key made of what such a store can name it by
    (session, timestamp, role), which is only as exact as that store allows."""
    if message.id is not None:
        return message.id
    return legacy_key(session_id, message)


def legacy_key(session_id: str, message: Message) -> str:
    """The key of a message announced without an id (what ``key_of`` falls back to)."""
    return f"~{session_id}\x1f{message.timestamp}\x1f{message.role}"


def is_key_of(key: str, session_id: str, message: Message) -> bool:
    """True when ``key`` names ``message``: its id, or, for a vector made from an
    announcement without an id, its session, timestamp and role."""
    if key.startswith("~"):
        return key == legacy_key(session_id, message)
    return key == message.id


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, never inside a surrogate pair, with
    lone surrogates replaced so every embedder can encode it as UTF-8."""
    if len(text) > limit:
        text = text[:limit]
        if text and "\ud800" <= text[-1] <= "\udbff":
            text = text[:-1]
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def metadata_str(message: Message, key: str) -> str | None:
    value = (message.metadata or {}).get(key)
    return value if isinstance(value, str) else None


__all__ = [
    "INDEXED_ROLES",
    "clip",
    "indexable",
    "is_key_of",
    "key_of",
    "legacy_key",
    "metadata_str",
]
