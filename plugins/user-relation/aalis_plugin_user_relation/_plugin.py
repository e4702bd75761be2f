"""The ``user-relation`` plugin: what it knows about a person (docs/host/facts.md).

It uses ``memory`` (facts live in its metadata), provides ``relation``, reads saved user
messages off the hot path (``deriver.py``), follows deletions and rewrites, takes part in
clears (type ``relation``, cross-session data) and in forgetting a person, and adds the
block "What I know about <person>" to the prompt through ``prompt_contributions``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from aalis_agent import PromptBlock, PromptRequest
from aalis_api_llm import llm
from aalis_api_memory import (
    ClearRequest,
    ClearType,
    ForgetRequest,
    TextRef,
    Transfer,
    clear_metadata_namespaces,
    memory,
    person_of,
    supports,
)
from aalis_api_relation import PersonRef, relation
from aalis_schema_message import Message

from aalis_core import Plugin, hookimpl
from aalis_plugin_user_relation._config import UserRelationConfig, extractor_of

if TYPE_CHECKING:
    from aalis_core import PluginContext
    from aalis_plugin_user_relation._deriver import Deriver
    from aalis_plugin_user_relation._service import FactService
    from aalis_plugin_user_relation._store import FactStore

RELATION_CLEAR_TYPE = "relation"


class UserRelation(Plugin):
    name = "user-relation"
    uses: ClassVar[dict[str, Any]] = {"memory": memory, "llm": llm}
    provides = (relation,)
    Config: ClassVar[type[UserRelationConfig]] = UserRelationConfig

    def __init__(self) -> None:
        self.deriver: Deriver | None = None
        self.service: FactService | None = None
        self.store: FactStore | None = None
        self._ctx: PluginContext | None = None
        self.config = UserRelationConfig()

    async def start(self, ctx: PluginContext) -> None:
        # Imported here, not at module level: every `aalis` command imports each plugin's
        # entry point, and the extractor's rules take tens of milliseconds to compile.
        from aalis_plugin_user_relation._deriver import Deriver
        from aalis_plugin_user_relation._llm_extractor import LlmExtractor
        from aalis_plugin_user_relation._service import FactService
        from aalis_plugin_user_relation._store import FactStore

        self._ctx = ctx
        if isinstance(ctx.config, UserRelationConfig):
            self.config = ctx.config
        self.store = FactStore(ctx.caps.memory, ctx.logger)
        model = None
        if extractor_of(self.config.extractor, ctx.logger) == "llm":
            model = LlmExtractor(
                ctx.caps.llm,
                timeout_s=self.config.llm_timeout_s,
                calls_per_hour=self.config.llm_calls_per_hour,
                max_chars=self.config.llm_max_chars,
                logger=ctx.logger,
            )
        self.deriver = Deriver(store=self.store, config=self.config, logger=ctx.logger, llm=model)
        self.service = FactService(
            store=self.store, deriver=self.deriver, config=self.config, logger=ctx.logger
        )
        _ = self.service.scope  # an invalid recall_scope is warned about once, at start
        await self.deriver.start()
        ctx.provide(relation, self.service)

    async def stop(self) -> None:
        deriver, self.deriver = self.deriver, None
        self.service = None
        if deriver is not None:
            await deriver.stop()

    def active(self) -> tuple[Deriver, FactService]:
        if self.deriver is None or self.service is None:
            raise RuntimeError("the user-relation plugin is not active")
        return self.deriver, self.service

    # -- events -----------------------------------------------------------------------------

    @hookimpl
    async def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        if self.deriver is not None:
            await self.deriver.submit(session_id, messages)

    @hookimpl
    async def memory_messages_deleted(
        self, session_id: str, timestamps: Sequence[int], ids: Sequence[str]
    ) -> None:
        if self.deriver is not None:
            await self.deriver.deleted(session_id, ids)

    @hookimpl
    async def memory_messages_rewritten(self, session_id: str, messages: Sequence[Message]) -> None:
        if self.deriver is not None:
            await self.deriver.rewritten(session_id, messages)

    # -- clearing and forgetting ------------------------------------------------------------

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [
            ClearType(
                RELATION_CLEAR_TYPE, TextRef("user-relation.clear.type", "Facts about people")
            )
        ]

    @hookimpl
    async def memory_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        if request.wants(RELATION_CLEAR_TYPE) and self.deriver is not None and self.store:
            if request.scope == "session":
                if request.types is not None:
                    request.report(
                        self.name,
                        False,
                        TextRef(
                            "user-relation.clear.cross-session",
                            "facts are cross-session data: a session clear cannot remove "
                            "them (aalis clear --all -t relation, or aalis facts forget)",
                        ),
                        RELATION_CLEAR_TYPE,
                    )
            else:
                await self._clear_all(request)
        await call_next()

    async def _clear_all(self, request: ClearRequest) -> None:
        from aalis_plugin_user_relation._store import FACTS_NAMESPACE, GAPS_NAMESPACE

        assert self.deriver is not None
        assert self.store is not None
        assert self._ctx is not None
        if not self.store.present:
            request.report(self.name, False, "no memory backend is active", RELATION_CLEAR_TYPE)
            return
        try:
            async with self.deriver.lock:
                memory_service = self.store.memory
                deleted = await clear_metadata_namespaces(
                    memory_service, [FACTS_NAMESPACE, GAPS_NAMESPACE], self._ctx.logger
                )
                await self.deriver.forget_gaps()
                # What is still in the history was read: it must not come back at the next
                # start (a clear of the facts alone keeps the history).
                if supports(memory_service, Transfer, "list_sessions"):
                    marks = {
                        info.session_id: info.last_timestamp
                        for info in await memory_service.list_sessions()
                        if info.last_timestamp is not None
                    }
                    await self.store.save_progress(marks, self.deriver.speakers)
        except Exception as exc:
            request.report(
                self.name,
                False,
                f"facts not cleared: {type(exc).__name__}: {exc}",
                RELATION_CLEAR_TYPE,
            )
            return
        request.report(self.name, True, f"{len(deleted[0])} facts deleted", RELATION_CLEAR_TYPE)

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        await call_next()
        if self.deriver is None or self.service is None:
            return
        self.deriver.forget_person(request.person)
        if self.store is None or not self.store.present:
            request.report(self.name, False, "no memory backend is active; facts not erased")
            return
        count = await self.service.forget(request.person)
        request.report(self.name, True, f"{count} facts erased", {"facts": count})

    # -- the prompt -------------------------------------------------------------------------

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        if self.deriver is None or self.service is None or self.config.prompt_tokens == 0:
            return []
        if self.store is None or not self.store.present:
            return []
        await self.deriver.settle_session(request.session_id, self.config.settle_s)
        persons = {
            PersonRef(p.platform, p.user_id)
            for m in request.history
            if m.role == "user" and (p := person_of(m)) is not None
        }
        facts = await self.service.about(
            request.session_id,
            request.query,
            limit=self.config.prompt_limit,
            persons=sorted(persons),
        )
        from aalis_plugin_user_relation._prompt import block_text

        text = block_text(facts, self.config.prompt_tokens)
        return [] if text is None else [PromptBlock(content=text)]

    # -- commands ---------------------------------------------------------------------------

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_user_relation._cli import facts_group

        cli.add_command(facts_group)

    def now_ms(self) -> int:
        return int(time.time() * 1000)


__all__ = ["RELATION_CLEAR_TYPE", "UserRelation"]
