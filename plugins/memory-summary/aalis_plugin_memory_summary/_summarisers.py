"""The two summarisers a compression can run: the bound ``llm`` model, or the extractive one.

Both answer the same question (previous summary + labelled span -> new summary + keep
picks), so the compression algorithm does not care which one ran; it only records the
summariser's ``id`` in the ``SummaryRecord`` and in its log lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from aalis_agent import estimate_text_tokens
from aalis_api_llm import ChatModel
from aalis_api_memory import AalisMemoryError
from aalis_schema_message import Message

from aalis_plugin_memory_summary._check import SummaryRejected, check_summary
from aalis_plugin_memory_summary._config import DEFAULT_MAX_REPLY_CHARS
from aalis_plugin_memory_summary._ids import EXTRACTIVE_ID
from aalis_plugin_memory_summary._prompt import (
    SYSTEM_PROMPT,
    ParsedReply,
    build_prompt,
    chunk_lines,
    parse_reply,
    transcript_lines,
)

#: Tokens reserved for the model's reply.
REPLY_TOKENS = 1024
#: Share of the model's context window the transcript of one call may fill.
PROMPT_SHARE = 0.6
MIN_CHUNK_TOKENS = 256


class SummaryFailed(AalisMemoryError):
    """The summariser produced no usable summary (empty text, no text at all)."""


class Summariser(Protocol):
    @property
    def id(self) -> str: ...

    async def summarise(
        self, previous: str | None, snapshot: Sequence[Message], positions: Sequence[int]
    ) -> ParsedReply: ...


class LlmSummariser:
    """Asks a ``ChatModel`` for ``{"summary", "keep"}``; a summary that fails the check
    (check.py) raises ``SummaryRejected``.

    A span too large for one call is summarised in consecutive chunks, each chunk's summary
    becoming the previous summary of the next (the same cumulative rule as across
    compressions); keep picks of every chunk are gathered and capped by the caller.
    """

    def __init__(
        self, model: ChatModel, model_id: str, *, max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    ) -> None:
        self._model = model
        self._id = model_id
        self._max_reply_chars = max_reply_chars

    @property
    def id(self) -> str:
        return self._id

    def _chunk_budget(self, previous: str | None) -> int:
        try:
            window = int(self._model.context_window)
        except Exception:
            window = 8192
        reserved = (
            estimate_text_tokens(SYSTEM_PROMPT)
            + max(estimate_text_tokens(previous or ""), REPLY_TOKENS)
            + REPLY_TOKENS
        )
        return max(MIN_CHUNK_TOKENS, int(window * PROMPT_SHARE) - reserved)

    async def summarise(
        self, previous: str | None, snapshot: Sequence[Message], positions: Sequence[int]
    ) -> ParsedReply:
        lines = transcript_lines(snapshot, positions)
        chunks = chunk_lines(lines, self._chunk_budget(previous))
        summary = previous
        keep: list[Any] = []
        structured = True
        for chunk in chunks:
            result = await self._model.chat(build_prompt(summary, chunk), max_tokens=REPLY_TOKENS)
            content = getattr(result, "content", None)
            if not isinstance(content, str):
                raise SummaryFailed(f"the model returned no text ({type(result).__name__})")
            if len(content) > self._max_reply_chars:
                # Refused unread: parsing costs time, and a runaway reply must never become
                # the summary that every later prompt carries.
                raise SummaryFailed(
                    f"the reply has {len(content):,} characters, more than max_reply_chars ="
                    f" {self._max_reply_chars:,}"
                )
            parsed = parse_reply(content)
            if not parsed.summary:
                raise SummaryFailed("the model returned an empty summary")
            # Each chunk's summary must carry its chunk (and the summary before it): a chunk
            # answered "OK." would otherwise drop its messages behind a good last chunk.
            carried = estimate_text_tokens(summary or "") + sum(
                estimate_text_tokens(line) for line in chunk
            )
            verdict = check_summary(parsed.summary, carried)
            if not verdict.ok:
                raise SummaryRejected(verdict.reason)
            summary = parsed.summary
            keep.extend(parsed.keep)
            structured = structured and parsed.structured
        if not summary:
            raise SummaryFailed("the model returned an empty summary")
        return ParsedReply(summary=summary, keep=tuple(keep), structured=structured)


class ExtractiveSummariser:
    """The offline summariser of ``extractive``; never keeps anything verbatim."""

    id = EXTRACTIVE_ID

    async def summarise(
        self, previous: str | None, snapshot: Sequence[Message], positions: Sequence[int]
    ) -> ParsedReply:
        items = []
        for position in positions:
            message = snapshot[position]
            if message.content:
                items.append((message.role, message.content))
        # Imported here: its tables and patterns cost every ``aalis`` command's start-up
        # otherwise, and only a compression needs them.
        from aalis_plugin_memory_summary._extractive import summarise

        # CPU-bound on long spans: keep the event loop (other sessions' chats) responsive.
        text = await asyncio.to_thread(summarise, previous, items)
        if not text.strip():
            raise SummaryFailed("the span holds no text to summarise")
        return ParsedReply(summary=text, keep=(), structured=True)


__all__ = ["ExtractiveSummariser", "LlmSummariser", "Summariser", "SummaryFailed"]
