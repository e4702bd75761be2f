"""The ``memory-summary`` plugin: provides ``compression``, takes part in clears, watches
the events that make a compression stale, and starts automatic compressions."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_llm import llm
from aalis_api_memory import (
    ClearRequest,
    ClearType,
    CompressionUsage,
    ForgetRequest,
    TextRef,
    compression,
    memory,
)
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl
from aalis_plugin_memory_summary._commit import Step, no_step
from aalis_plugin_memory_summary._config import MemorySummaryConfig
from aalis_plugin_memory_summary._forgetting import forget_in_summaries
from aalis_plugin_memory_summary._handlers import SUMMARY_CLEAR_TYPE_ID, on_clear, on_token_usage
from aalis_plugin_memory_summary._service import SummaryCompression

if TYPE_CHECKING:
    from aalis_core import PluginContext


class MemorySummary(Plugin):
    """Cumulative summaries of long sessions, by the bound ``llm`` or the extractive method.

    ``memory`` and ``llm`` are *used*, not required: without them the plugin still starts and
    ``compress`` answers ``unavailable``, so a host without a model keeps running. ``clock``
    (monotonic seconds) is for tests of the auto-compression back-off; ``step`` is awaited
    at the named points of every commit (``commit.Step``), for tests that stop a commit
    there or kill the process at one of them.
    """

    name = "memory-summary"
    uses: ClassVar[dict[str, Any]] = {"memory": memory, "llm": llm}
    provides = (compression,)
    Config: ClassVar[type[MemorySummaryConfig]] = MemorySummaryConfig

    def __init__(
        self, *, clock: Callable[[], float] | None = None, step: Step | None = None
    ) -> None:
        self._clock = clock or time.monotonic
        self._step = step or no_step
        self.service: SummaryCompression | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: MemorySummaryConfig = ctx.config  # validated by the host
        self.service = SummaryCompression(
            memory=ctx.caps.memory,
            llm=ctx.caps.llm,
            emit=ctx.emit,
            logger=ctx.logger,
            config=config,
            clock=self._clock,
            name=self.name,
            step=self._step,
        )
        ctx.provide(compression, self.service)

    async def stop(self) -> None:
        service, self.service = self.service, None
        if service is not None:
            await service.aclose()

    # -- clearing ---------------------------------------------------------------------------

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        label = TextRef("memory-summary.clear.type", "Conversation summary")
        return [ClearType(SUMMARY_CLEAR_TYPE_ID, label)]

    @hookimpl
    async def memory_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        if self.service is None:
            await call_next()
            return
        await on_clear(self.service, request, call_next)

    # -- events -----------------------------------------------------------------------------

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        if self.service is None:
            await call_next()
            return
        await forget_in_summaries(self.service, request, call_next)

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        if self.service is not None:
            self.service.jobs.note_changed(session_id)

    @hookimpl
    def memory_messages_deleted(self, session_id: str, timestamps: Sequence[int]) -> None:
        if self.service is not None:
            self.service.jobs.note_changed(session_id)

    @hookimpl
    def memory_messages_rewritten(self, session_id: str, messages: Sequence[Message]) -> None:
        if self.service is not None:
            self.service.jobs.note_changed(session_id)

    @hookimpl
    async def token_usage(
        self, session_id: str, platform: str | None, usage: CompressionUsage
    ) -> None:
        if self.service is not None:
            await on_token_usage(self.service, session_id, platform, usage)

    # -- CLI --------------------------------------------------------------------------------

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_memory_summary._cli import compress_command

        cli.add_command(compress_command)


__all__ = ["MemorySummary"]
