"""The ``notes`` plugin: what the host sees.

- ``uses = {"memory": memory}``: optional, so the plugin starts even without a memory
  backend and says so when asked for notes, instead of staying ``pending``.
- ``Config``: ``[plugins.notes]`` in ``aalis.toml`` is validated into ``NotesConfig``
  before anything starts (a typo is an error naming the key).
- ``register_commands``: ``aalis notes add|list``.
- ``memory_clear_types`` + ``memory_clear``: ``aalis clear -t notes`` and every clear
  without types remove notes too, reporting one ``type="notes"`` row.
- ``memory_forget``: ``aalis forget --person P`` removes the notes of P's private sessions
  and the notes marked as P's in group sessions (unmarked notes of a group stay: nobody
  said whose they are), one row with the count.
- ``history_changed``: counts and logs structural history changes per session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from aalis_api_memory import (
    ClearRequest,
    ClearType,
    ForgetRequest,
    MemoryService,
    clear_metadata_namespaces,
    memory,
)

from aalis_core import CapabilityAbsent, Plugin, PluginContext, hookimpl
from aalis_plugin_notes._notes import NAMESPACE, Notes

CLEAR_TYPE = "notes"


def _positive(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, got {value!r}")


@attrs.frozen(kw_only=True)
class NotesConfig:
    """``[plugins.notes]``: limits that keep one metadata entry small."""

    #: notes one session may hold; adding more is refused
    max_notes: int = attrs.field(default=100, validator=_positive)
    #: characters per note
    max_length: int = attrs.field(default=2000, validator=_positive)


class NotesPlugin(Plugin):
    """Per-session notes in the memory metadata store (namespace ``notes``)."""

    name = "notes"
    uses = {"memory": memory}
    Config = NotesConfig

    def __init__(self) -> None:
        self.ctx: PluginContext | None = None
        self.config = NotesConfig()
        #: ``history_changed`` events seen per session since start
        self.history_changes: Counter[str] = Counter()

    async def start(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        if ctx.config is not None:
            self.config = ctx.config

    async def stop(self) -> None:
        self.ctx = None

    # -- the service the commands use ------------------------------------------------------

    def _memory(self) -> MemoryService:
        if self.ctx is None:
            raise RuntimeError("the notes plugin is not running")
        # Raises CapabilityAbsent (naming capability and consumer) when no backend is bound.
        service: MemoryService = self.ctx.caps.memory.use
        return service

    def notes(self) -> Notes:
        """Notes on the memory provider this plugin is bound to (``[consumers.notes]``)."""
        return Notes(
            self._memory(), max_notes=self.config.max_notes, max_length=self.config.max_length
        )

    # -- hooks -----------------------------------------------------------------------------

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_notes._cli import notes_group  # click commands, loaded lazily

        cli.add_command(notes_group)

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [ClearType(CLEAR_TYPE, "Session notes")]

    @hookimpl
    async def memory_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        # Notes are per-session data, so both scopes clear them. Done on the way in: if the
        # history clear in the middle fails, notes are gone anyway, which is what the user
        # asked for with this type.
        if request.wants(CLEAR_TYPE):
            try:
                service = self._memory()
            except (CapabilityAbsent, RuntimeError):
                request.report(self.name, False, "no memory backend; notes not cleared", CLEAR_TYPE)
            else:
                if request.session_id is not None:  # scope "session"
                    count = await Notes(service).clear(request.session_id)
                    message = f"{count} note{'' if count == 1 else 's'} deleted"
                else:  # scope "all": the whole namespace, in one batch
                    assert self.ctx is not None
                    (keys,) = await clear_metadata_namespaces(service, [NAMESPACE], self.ctx.logger)
                    message = f"notes of {len(keys)} session{'' if len(keys) == 1 else 's'} deleted"
                request.report(self.name, True, message, CLEAR_TYPE)
        await call_next()

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        await call_next()  # after the store: it says which sessions were the person's
        try:
            count = await self.notes().forget(str(request.person), request.private_sessions)
        except (CapabilityAbsent, RuntimeError):
            request.report(self.name, False, "no memory backend; notes not erased")
            return
        request.report(self.name, True, f"{count} notes erased", {"notes": count})

    @hookimpl
    def history_changed(self, session_id: str) -> None:
        self.history_changes[session_id] += 1
        if self.ctx is not None:
            self.ctx.logger.info(
                "history changed", session_id=session_id, seen=self.history_changes[session_id]
            )


__all__ = ["CLEAR_TYPE", "NotesConfig", "NotesPlugin"]
