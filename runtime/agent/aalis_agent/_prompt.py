"""Prompt contributions: how any plugin adds a block to an agent's prompt.

An agent (the chat) builds its prompt from the system prompt, the summary and the history,
then asks every plugin implementing ``prompt_contributions`` for extra blocks (recalled
memories, a profile, a reminder) and places them after the history, just before the newest
user message: the long shared head of the prompt stays identical from turn to turn, which is
what a provider's prompt cache needs. The agent never knows which plugin contributed what,
so recall, profiles or retrieval plug in without the agent changing.

A contributor is plugin code: one that raises, returns garbage or is slow is skipped and
logged, and the turn goes on without its block (see docs/host/recall.md).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
from aalis_schema_message import Message

from aalis_core import HostServices, get_logger

#: Seconds one contributor may take before its block is dropped for this turn.
DEFAULT_CONTRIBUTION_TIMEOUT = 5.0


def _str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a str, got {type(value).__name__}")


def _optional_str(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a str or None, got {type(value).__name__}")


def _messages(value: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class PromptRequest:
    """What a contributor may know about the prompt being built.

    ``history`` is what the prompt already carries (oldest first, the newest user message
    last), so a contributor can leave out what the model sees anyway.
    """

    session_id: str = attrs.field(validator=_str)
    #: The newest user message's text: what the contribution should be relevant to.
    query: str = attrs.field(validator=_str)
    platform: str | None = attrs.field(default=None, validator=_optional_str)
    history: tuple[Message, ...] = attrs.field(default=(), converter=_messages)


@attrs.frozen(kw_only=True)
class PromptBlock:
    """One block for the prompt; the agent sends it as a message of ``role``.

    ``source`` names the contributing plugin; the collector fills it in, so a contributor
    cannot pass itself off as another.
    """

    content: str = attrs.field(validator=_str)
    role: str = attrs.field(default="system", validator=_str)
    source: str = attrs.field(default="", validator=_str)

    def to_message(self) -> Message:
        """The block as the message the agent inserts (marked so it is never saved)."""
        return Message(
            role=self.role,
            content=self.content,
            metadata={"prompt_contribution": self.source},
        )


def _blocks_from(result: object) -> list[PromptBlock] | None:
    """The blocks in a contributor's answer, or None when it is not a list of blocks."""
    if result is None:
        return []
    if isinstance(result, PromptBlock):
        return [result]
    if isinstance(result, (str, bytes)) or not isinstance(result, Sequence):
        return None
    if not all(isinstance(item, PromptBlock) for item in result):
        return None
    return list(result)


async def collect_prompt_blocks(
    host: HostServices,
    request: PromptRequest,
    *,
    limit_s: float = DEFAULT_CONTRIBUTION_TIMEOUT,
) -> list[PromptBlock]:
    """Ask every active ``prompt_contributions`` implementation for blocks, in hook order.

    Each contributor gets ``limit_s`` seconds; one that raises (``SystemExit`` included),
    times out or returns something that is not a list of ``PromptBlock`` is skipped and
    logged with its plugin's name. Empty blocks are dropped. Never raises for a
    contributor's fault.
    """
    if isinstance(limit_s, bool) or not isinstance(limit_s, (int, float)) or not limit_s > 0:
        raise ValueError(f"limit_s must be a positive number of seconds, got {limit_s!r}")
    timeout = min(float(limit_s), 365 * 24 * 3600.0)
    collected: list[PromptBlock] = []
    for name, function in host.hook_impls("prompt_contributions"):
        logger = get_logger(name)
        try:
            result = function(request)
            if inspect.isawaitable(result):
                # In this task, not a new one: a SystemExit raised by a task would escape
                # to the event loop instead of reaching the handler below.
                async with asyncio.timeout(timeout):
                    result = await result
        except TimeoutError:
            logger.warning("prompt contribution skipped", reason=f"timed out after {timeout:g} s")
            continue
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # plugin code: SystemExit is contained too
            logger.warning(
                "prompt contribution skipped",
                reason=f"{type(exc).__name__}: {exc}",
                exc_info=exc,
            )
            continue
        blocks = _blocks_from(result)
        if blocks is None:
            logger.warning(
                "prompt contribution skipped",
                reason=f"expected a list of PromptBlock, got {type(result).__name__}",
            )
            continue
        for block in blocks:
            if block.content.strip():
                collected.append(attrs.evolve(block, source=name))
    return collected


def insert_prompt_blocks(prompt: Sequence[Message], blocks: Sequence[PromptBlock]) -> list[Message]:
    """``prompt`` with ``blocks`` placed just before its last user message (or at the end
    when it has none), so the head shared with the previous turn stays unchanged."""
    messages = list(prompt)
    if not blocks:
        return messages
    at = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            at = index
            break
    return [*messages[:at], *(block.to_message() for block in blocks), *messages[at:]]


__all__ = [
    "DEFAULT_CONTRIBUTION_TIMEOUT",
    "PromptBlock",
    "PromptRequest",
    "collect_prompt_blocks",
    "insert_prompt_blocks",
]
