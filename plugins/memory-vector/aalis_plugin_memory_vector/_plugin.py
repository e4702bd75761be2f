"""The ``memory-vector`` plugin: semantic recall of earlier messages.

It uses ``embedding``, ``vectorstore`` and ``memory`` (none required: without them it starts,
records what it could not index, and ``recall`` says why it cannot run), provides ``recall``,
follows the message events, takes part in clears with its type ``vector``, and adds the
recalled turns to the chat's prompt through ``prompt_contributions``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from aalis_agent import PromptBlock, PromptRequest
from aalis_api_embedding import embedding
from aalis_api_memory import (
    ClearRequest,
    ClearType,
    ForgetRequest,
    TextRef,
    history_cleared,
    memory,
)
from aalis_api_vectorstore import RecallHit, recall, vectorstore
from aalis_schema_message import Message, new_message_id

from aalis_core import Plugin, hookimpl
from aalis_plugin_memory_vector._config import MemoryVectorConfig
from aalis_plugin_memory_vector._indexer import Indexer, IndexOutcome
from aalis_plugin_memory_vector._persons import PersonRegistry
from aalis_plugin_memory_vector._recall import VectorRecall
from aalis_plugin_memory_vector._text import key_of

if TYPE_CHECKING:
    from aalis_core import PluginContext
    from aalis_plugin_memory_vector._maintenance import SessionCheck

VECTOR_CLEAR_TYPE = "vector"


class MemoryVector(Plugin):
    name = "memory-vector"
    uses: ClassVar[dict[str, Any]] = {
        "memory": memory,
        "embedding": embedding,
        "vectorstore": vectorstore,
    }
    provides = (recall,)
    Config: ClassVar[type[MemoryVectorConfig]] = MemoryVectorConfig

    def __init__(self) -> None:
        self.indexer: Indexer | None = None
        self.recall: VectorRecall | None = None
        self.persons: PersonRegistry | None = None
        self._ctx: PluginContext | None = None
        self.config = MemoryVectorConfig()

    async def start(self, ctx: PluginContext) -> None:
        self._ctx = ctx
        if isinstance(ctx.config, MemoryVectorConfig):
            self.config = ctx.config
        caps = ctx.caps
        self.persons = PersonRegistry(caps.memory, ctx.logger)
        self.indexer = Indexer(
            embedding=caps.embedding,
            vectorstore=caps.vectorstore,
            memory=caps.memory,
            config=self.config,
            logger=ctx.logger,
        )
        self.recall = VectorRecall(
            embedding=caps.embedding,
            vectorstore=caps.vectorstore,
            memory=caps.memory,
            config=self.config,
            indexer=self.indexer,
            logger=ctx.logger,
            persons=self.persons,
        )
        await self.indexer.start()
        ctx.provide(recall, self.recall)

    async def stop(self) -> None:
        indexer, self.indexer = self.indexer, None
        self.recall = None
        if indexer is not None:
            await indexer.stop()

    def _active(self) -> tuple[Indexer, VectorRecall]:
        if self.indexer is None or self.recall is None or self._ctx is None:
            raise RuntimeError("the memory-vector plugin is not active")
        return self.indexer, self.recall

    # -- what the CLI calls -----------------------------------------------------------------

    @property
    def caps(self) -> Any:
        if self._ctx is None:
            raise RuntimeError("the memory-vector plugin is not active")
        return self._ctx.caps

    async def reindex(self, session_id: str | None) -> dict[str, IndexOutcome]:
        """Re-embed from the message store (the source of truth): one session, or every
        session (then every vector, of every model, is replaced). See ``maintenance``."""
        from aalis_plugin_memory_vector._maintenance import reindex

        indexer, _ = self._active()
        return await reindex(indexer, self.caps, session_id, self.persons)

    async def check(self, session_id: str | None, *, repair: bool = False) -> list[SessionCheck]:
        """Compare the index with the message store per session (``aalis vector check``)."""
        from aalis_plugin_memory_vector._maintenance import check_index

        indexer, _ = self._active()
        return await check_index(indexer, self.caps, session_id, repair=repair)

    # -- clearing ---------------------------------------------------------------------------

    @hookimpl
    def memory_clear_types(self) -> list[ClearType]:
        return [
            ClearType(
                VECTOR_CLEAR_TYPE,
                TextRef("memory-vector.clear.type", "Semantic recall index (vectors)"),
            )
        ]

    @hookimpl
    async def memory_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        # The history goes first, the vectors after: an indexer of another process that
        # upserts in between re-checks its batch against the store and finds it gone, so
        # nothing cleared comes back (docs/recall.md, "Identity and the recall check").
        began = new_message_id()
        await call_next()
        await self._drop_persons(request)
        if not request.wants(VECTOR_CLEAR_TYPE) or self.indexer is None:
            return
        named = request.types is not None
        if not self.caps.vectorstore.present:
            if named:
                request.report(self.name, False, "no vector store is active", VECTOR_CLEAR_TYPE)
            return
        try:
            deleted = await self.indexer.clear(request.session_id, began)
        except Exception as exc:
            request.report(
                self.name,
                False,
                f"vectors not cleared: {type(exc).__name__}: {exc}",
                VECTOR_CLEAR_TYPE,
            )
            return
        where = "every session" if request.session_id is None else f"session {request.session_id!r}"
        request.report(self.name, True, f"{deleted} vectors of {where} deleted", VECTOR_CLEAR_TYPE)

    async def _drop_persons(self, request: ClearRequest) -> None:
        """The person registry follows the history it is derived from."""
        if self.persons is not None and self.caps.memory.present and history_cleared(request):
            try:
                await self.persons.drop(request.session_id)
            except Exception as exc:
                assert self._ctx is not None
                self._ctx.logger.warning("person registry not cleared", error=str(exc))

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        from aalis_plugin_memory_vector._forgetting import forget_vectors

        if self._ctx is None:
            await call_next()
            return
        await forget_vectors(
            self.name, self.indexer, self.persons, self._ctx.caps, request, call_next
        )

    # -- events -----------------------------------------------------------------------------

    @hookimpl
    async def memory_messages_saved(self, session_id: str, messages: Sequence[Message]) -> None:
        if self.persons is not None and self.caps.memory.present:
            try:  # recall reads the newest messages again: a miss here narrows, never widens
                await self.persons.observe(session_id, messages)
            except Exception as exc:
                assert self._ctx is not None
                self._ctx.logger.warning(
                    "people not recorded", session_id=session_id, error=str(exc)
                )
        if self.indexer is not None:
            await self.indexer.submit(session_id, messages)

    @hookimpl
    async def memory_messages_deleted(
        self, session_id: str, timestamps: Sequence[int], ids: Sequence[str]
    ) -> None:
        if self.indexer is not None:
            await self.indexer.forget(session_id, timestamps, ids)

    @hookimpl
    async def memory_messages_rewritten(self, session_id: str, messages: Sequence[Message]) -> None:
        if self.indexer is not None:
            await self.indexer.rewrite(session_id, messages)

    # -- the prompt -------------------------------------------------------------------------

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        if self.indexer is None or self.recall is None or self.config.prompt_k == 0:
            return []
        if not (self.caps.embedding.present and self.caps.vectorstore.present):
            return []
        await self.indexer.settle(self.config.settle_s)
        exclude = {key_of(request.session_id, m) for m in request.history}
        hits: list[RecallHit] = await self.recall.search(
            request.session_id,
            request.query,
            k=self.config.prompt_k,
            platform=request.platform,
            exclude=exclude,
            min_score=self.config.prompt_min_score,
        )
        from aalis_plugin_memory_vector._block import block_text

        text = block_text(
            request.session_id,
            hits,
            exclude,
            known_texts=[m.content for m in request.history if isinstance(m.content, str)],
            max_tokens=self.config.prompt_tokens,
        )
        return [] if text is None else [PromptBlock(content=text)]

    # -- commands ---------------------------------------------------------------------------

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from aalis_plugin_memory_vector._cli import vector_group

        cli.add_command(vector_group)


__all__ = ["VECTOR_CLEAR_TYPE", "MemoryVector"]
