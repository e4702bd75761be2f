"""The offline stand-in that answers when no ``llm`` provider is configured.

It exists so that ``aalis chat`` works out of the box (history, clearing and compression can
be tried without any model), and it must never be mistaken for a model: every reply says
that it is a stand-in. It is deliberately *not* an ``llm`` provider, so no other plugin (the
summariser in particular) can ever pick it up.
"""

from __future__ import annotations

from collections.abc import Sequence

from aalis_api_llm import ChatResult
from aalis_schema_message import Message

STAND_IN_ID = "stand-in"
NOTICE = "[offline stand-in, not a language model; configure [plugins.llm-openai] for real replies]"


def _quote(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class StandInModel:
    """Replies with a fixed notice, an echo of the last user message, and what it can see."""

    def __init__(self, context_window: int = 8192) -> None:
        self._context_window = context_window

    @property
    def id(self) -> str:
        return STAND_IN_ID

    @property
    def context_window(self) -> int:
        return self._context_window

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        visible = [m for m in messages if not m.is_control]
        notes = [m for m in visible if m.metadata and "prompt_contribution" in m.metadata]
        visible = [m for m in visible if not (m.metadata and "prompt_contribution" in m.metadata)]
        last_user = next((m for m in reversed(visible) if m.role == "user"), None)
        said = _quote(last_user.content or "") if last_user is not None else ""
        turns = sum(1 for m in visible if m.role in ("user", "assistant"))
        summary = any(
            m.role == "system" and (m.content or "").startswith("Summary of") for m in visible
        )
        parts = [NOTICE, f'You said: "{said}".']
        parts.append(
            f"I can see {turns} message{'s' if turns != 1 else ''} of this conversation"
            + (" and a summary of earlier ones." if summary else ".")
        )
        if notes:
            quoted = "; ".join(_quote(m.content or "", 240) for m in notes)
            parts.append(f"Added to the prompt by plugins: {quoted}")
        return ChatResult(content=" ".join(parts), finish_reason="stop", model=STAND_IN_ID)


__all__ = ["NOTICE", "STAND_IN_ID", "StandInModel"]
