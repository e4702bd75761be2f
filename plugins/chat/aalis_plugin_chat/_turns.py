"""The conversation part of a prompt, shaped the way strict chat templates accept it.

Many chat templates (Llama, Mistral, Gemma; vLLM and llama.cpp apply them) refuse a
conversation that, after the system messages, starts with an assistant message or has two
user messages in a row. Both happen in a healthy session: a compression keeps an assistant
message verbatim whose question it summarised, trimming to the budget can cut between a
question and its answer, and a turn whose model call failed leaves its question unanswered
before the next one. So the prompt builder, not the store, fixes the shape:

- leading messages before the first user message are moved out of the conversation: their
  text goes into one system note ("kept from earlier"), tool calls and results without their
  turn are dropped (a result without its call is refused by every server);
- consecutive user messages are merged into one, their texts joined by a blank line.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from aalis_schema_message import Message

EARLIER_NOTE = "Kept from earlier in the conversation:"


def _text_of(message: Message) -> str | None:
    content = message.content
    return content if isinstance(content, str) and content.strip() else None


def conversation_turns(messages: Sequence[Message]) -> tuple[list[Message], Message | None]:
    """``messages`` (the history, no system content) as ``(conversation, earlier_note)``.

    ``conversation`` starts with a user message (or is empty) and never has two user
    messages in a row; ``earlier_note`` is a system message with the text of what had to
    leave the front of the conversation, or None.
    """
    first_user = next((i for i, m in enumerate(messages) if m.role == "user"), len(messages))
    lead, rest = messages[:first_user], messages[first_user:]
    note = None
    lines = [
        f"{m.role}: {text}"
        for m in lead
        if not m.tool_calls and m.role != "tool" and (text := _text_of(m)) is not None
    ]
    if lines:
        note = Message(role="system", content="\n".join([EARLIER_NOTE, *lines]))

    conversation: list[Message] = []
    for message in rest:
        previous = conversation[-1] if conversation else None
        if previous is not None and previous.role == "user" and message.role == "user":
            texts = [t for t in (_text_of(previous), _text_of(message)) if t is not None]
            conversation[-1] = attrs.evolve(message, content="\n\n".join(texts) or None)
            continue
        conversation.append(message)
    return conversation, note


__all__ = ["EARLIER_NOTE", "conversation_turns"]
