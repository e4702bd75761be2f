"""The summary model's prompt, and a tolerant reader for its reply.

Models wrap JSON in code fences, add a sentence before it, or ignore the format entirely;
rejecting such replies would make compression fail for no good reason. The reader therefore
accepts the first JSON object anywhere in the reply, and a reply with no JSON object at all
is taken as the summary itself (keep nothing). Only an empty summary is a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import attrs
from aalis_agent import estimate_text_tokens
from aalis_schema_message import Message

#: Characters of one message shown to the summary model; longer texts are cut in the middle.
MESSAGE_CHARS = 4000
#: JSON decodes one reply may cost. Each is linear in the text after its start, so reading a
#: reply is linear in its size, whatever it holds (a reader that retries at every ``{`` is
#: quadratic: a 360 KB garbage reply once froze the event loop for seconds).
MAX_DECODE_ATTEMPTS = 16

SYSTEM_PROMPT = """\
You maintain the running summary of a chat conversation so that the conversation can go on \
without its older messages.

You receive the previous summary (if any) and the next part of the conversation. Each \
message is labelled #<number>. Write ONE updated summary that merges the previous summary \
with the new messages: who the participants are, what they asked, decided, agreed and \
still need, facts, names, numbers and open questions. Be concise and self-contained; write \
in the language of the conversation; do not invent anything.

Optionally list in "keep" the labels of a few messages that must stay word for word \
(exact instructions still in force, code, figures). Prefer keeping none.

Reply with JSON only:
{"summary": "<the updated summary>", "keep": ["#12", "#15"]}"""


def _clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} [...] {text[-half:]}"


def message_line(position: int, message: Message) -> str:
    """One labelled line of the transcript the model reads."""
    who = message.role + (f" ({message.name})" if message.name and message.role != "tool" else "")
    parts: list[str] = []
    if message.content:
        parts.append(_clip(message.content))
    for call in message.tool_calls or ():
        parts.append(f"[calls tool {call.name}({_clip(call.arguments, 500)})]")
    if message.role == "tool":
        who = f"tool result{f' of {message.name}' if message.name else ''}"
    body = " ".join(parts) if parts else "(no text)"
    return f"#{position} {who}: {body}"


def transcript_lines(snapshot: Sequence[Message], positions: Sequence[int]) -> list[str]:
    return [message_line(i, snapshot[i]) for i in positions]


def chunk_lines(lines: Sequence[str], budget_tokens: int) -> list[list[str]]:
    """Split the transcript into consecutive chunks of at most ``budget_tokens`` each.

    A single line larger than the budget still forms its own chunk (it was already clipped).
    """
    chunks: list[list[str]] = []
    current: list[str] = []
    used = 0
    for line in lines:
        tokens = estimate_text_tokens(line) + 1
        if current and used + tokens > budget_tokens:
            chunks.append(current)
            current, used = [], 0
        current.append(line)
        used += tokens
    if current:
        chunks.append(current)
    return chunks


def build_prompt(previous: str | None, lines: Sequence[str]) -> list[Message]:
    user = []
    if previous:
        user.append(f"Previous summary:\n{previous}\n")
    else:
        user.append("Previous summary: (none)\n")
    user.append("Conversation:")
    user.extend(lines)
    return [
        Message(role="system", content=SYSTEM_PROMPT),
        Message(role="user", content="\n".join(user)),
    ]


@attrs.frozen
class ParsedReply:
    summary: str
    keep: tuple[Any, ...]
    #: False when the reply held no JSON object and the whole text became the summary.
    structured: bool


FENCE = "```"
#: The info string of a fence (```json): a word alone on the fence's first line.
_FENCE_TAG = re.compile(r"[A-Za-z0-9_-]*[ \t]*\r?\n")
#: Where a JSON object may start: ``{`` then (after blanks) a key's quote or the closing brace.
_OBJECT_START = re.compile(r"\{\s*[\"}]")
_DECODER = json.JSONDecoder()


def _fence_body(inner: str) -> str:
    """The text of a fenced block without its info string (```json)."""
    tag = _FENCE_TAG.match(inner)
    return inner[tag.end() :] if tag else inner


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of the closed code fences of ``text``, in order, in one pass."""
    parts = text.split(FENCE)
    return [_fence_body(parts[i]) for i in range(1, len(parts) - 1, 2)]


class _Attempts:
    """The decode budget shared by every candidate text of one reply."""

    def __init__(self, limit: int) -> None:
        self.left = limit


def _first_object(text: str, attempts: _Attempts) -> dict[str, Any] | None:
    for match in _OBJECT_START.finditer(text):
        if attempts.left <= 0:
            return None
        attempts.left -= 1
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # broken, or nested past the decoder's limit
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_reply(text: str) -> ParsedReply:
    """Read ``{"summary": ..., "keep": [...]}`` out of a model reply, tolerantly.

    Code fences and text around the object are ignored; the first JSON object wins (inside
    a fence first, then anywhere). With no JSON object the stripped text (a fence around the
    whole of it removed) is the summary and nothing is kept. A ``summary`` that is missing or
    not a string reads as empty (the caller fails the compression); a ``keep`` that is not a
    list reads as empty. Linear in ``len(text)``: at most ``MAX_DECODE_ATTEMPTS`` decodes,
    the rest is single passes. The caller bounds the size (``max_reply_chars``).
    """
    stripped = text.strip()
    attempts = _Attempts(MAX_DECODE_ATTEMPTS)
    for candidate in [*_fenced_blocks(stripped), stripped]:
        data = _first_object(candidate, attempts)
        if data is not None:
            summary = data.get("summary")
            keep = data.get("keep")
            return ParsedReply(
                summary=summary.strip() if isinstance(summary, str) else "",
                keep=tuple(keep) if isinstance(keep, list) else (),
                structured=True,
            )
    plain = stripped
    if len(stripped) >= 2 * len(FENCE) and stripped.startswith(FENCE) and stripped.endswith(FENCE):
        plain = _fence_body(stripped[len(FENCE) : -len(FENCE)]).strip()
    return ParsedReply(summary=plain, keep=(), structured=False)


__all__ = [
    "MAX_DECODE_ATTEMPTS",
    "MESSAGE_CHARS",
    "SYSTEM_PROMPT",
    "ParsedReply",
    "build_prompt",
    "chunk_lines",
    "message_line",
    "parse_reply",
    "transcript_lines",
]
