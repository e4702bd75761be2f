"""The agent's hooks, published through the ``aalis.hookspecs`` entry point.

They belong to whoever runs turns, not to the memory contract: a backend never sees a prompt
or a model's token figures. See docs/reference/hooks.md.

* a prompt contribution: ``prompt_contributions`` (async, collected by
  ``collect_prompt_blocks``, each contributor contained);
* an event: ``token_usage``, emitted by ``run_turn`` after each model call.
"""

from __future__ import annotations

from collections.abc import Awaitable

from aalis_api_memory import CompressionUsage

from aalis_agent._prompt import PromptBlock, PromptRequest
from aalis_core import hookspec


@hookspec
async def prompt_contributions(request: PromptRequest) -> list[PromptBlock]:
    """Blocks to add to the prompt an agent is building for ``request.session_id``.

    The agent places them after the history, before the newest user message. Leave out what
    ``request.history`` already carries. Return ``[]`` when there is nothing to add; a
    contributor that raises or is slow is skipped for that turn and logged.
    """
    return []


@hookspec
def token_usage(
    session_id: str, platform: str | None, usage: CompressionUsage
) -> Awaitable[None] | None:
    """An agent's token figures after a model call; the compression provider may start an
    automatic compression from it."""


#: The events this part emits, for emitters and tests that want to check a name.
EVENTS: tuple[str, ...] = ("token_usage",)

__all__ = ["EVENTS", "prompt_contributions", "token_usage"]
