"""The offline stand-in that answers when no ``llm`` provider is configured.

It exists so that ``aalis chat`` works out of the box (history, clearing and compression can
be tried without any model), and it must never be mistaken for a model: every reply says
that it is a stand-in. It is deliberately *not* an ``llm`` provider, so no other plugin (the
summariser in particular) can ever pick it up.

Its replies are saved like a model's, and a saved reply is read again by summaries, exports
and recall. So it quotes nothing but the words of the last user message: a recall block may
hold another session's (another person's) text, the summary and the system prompt are not
the user's to see verbatim, and an echo of them would launder that text into this
session's history. It says only *how many* blocks plugins added; ``/recall`` shows them
on the terminal, where nothing is stored.
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

    def __init__(self, context_window: int = 8192, *, said: str | None = None) -> None:
        self._context_window = context_window
        self._said = said

    def answering(self, text: str) -> StandInModel:
        """The stand-in for one turn whose user typed ``text``: it quotes exactly that.

        The prompt's last user message is not always the turn's own words: a strict chat
        template merges consecutive questions, and in a shared session the one before may
        be another person's, unanswered (their chat had not replied yet)."""
        return StandInModel(self._context_window, said=text)

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
        notes = [m for m in visible if _contributed(m)]
        visible = [m for m in visible if not _contributed(m)]
        last_user = next((m for m in reversed(visible) if m.role == "user"), None)
        # The user's own words of this turn, and nothing else (see the module's docstring).
        if self._said is not None:
            said = _quote(self._said)
        else:
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
            count = len(notes)
            parts.append(
                f"Plugins added {count} block{'s' if count != 1 else ''} to the prompt "
                "(/recall shows them; I do not repeat them)."
            )
        return ChatResult(content=" ".join(parts), finish_reason="stop", model=STAND_IN_ID)


def _contributed(message: Message) -> bool:
    """A block another plugin added to the prompt (recall, a profile): never quoted."""
    return bool(message.metadata and "prompt_contribution" in message.metadata)


__all__ = ["NOTICE", "STAND_IN_ID", "StandInModel"]
