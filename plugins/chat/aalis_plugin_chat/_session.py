"""One chat session: turns, slash commands, and the figures that drive auto compression.

The session owns no data. Messages go to the ``memory`` provider, clears go through
``run_clear`` (so every plugin takes part), compression through the ``compression``
provider, and after each reply a ``token_usage`` event tells whoever listens (memory-summary)
how full the prompt was. That is the whole point of the main job: it exercises the plugins
the way an agent would.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs
from aalis_agent import (
    PromptBlock,
    PromptPlan,
    TurnError,
    TurnReplyNotSaved,
    TurnSettings,
    UndoError,
    run_clear,
    run_turn,
    undo_last_turn,
)
from aalis_api_llm import ChatModel
from aalis_api_memory import COMPRESSION_ABSENT, CompressionError, Person, UnknownClearType
from aalis_schema_message import Message

from aalis_core import CapabilityAbsent, HostServices
from aalis_plugin_chat._config import ChatConfig
from aalis_plugin_chat._login import os_login
from aalis_plugin_chat._standin import StandInModel
from aalis_plugin_chat._turns import conversation_turns

HELP = """\
Commands:
  /history              show the summary and the active messages of this session
  /clear [-t TYPE ...]  clear this session (every type, or only the named ones)
  /compress             summarise this session now
  /undo                 delete the last turn (your last message and the reply)
  /recall [QUERY]       search earlier conversations (no QUERY: what the last prompt got)
  /help                 this help
  /quit                 leave (so does end of input)"""


@attrs.define
class Reply:
    """What one input line produced: lines for stdout, lines for stderr, and whether to stop."""

    out: list[str] = attrs.Factory(list)
    err: list[str] = attrs.Factory(list)
    quit: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.err)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _arrange(chosen: Sequence[Message]) -> list[Message]:
    """Strict chat templates: no assistant first, no two user messages in a row (turns.py)."""
    turns, earlier = conversation_turns(chosen)
    return [*([earlier] if earlier is not None else []), *turns]


class ChatSession:
    """A conversation in session ``session_id`` through the chat plugin's handles."""

    def __init__(
        self,
        *,
        host: HostServices,
        caps: Any,
        emit: Callable[..., Awaitable[None]],
        config: ChatConfig,
        session_id: str,
        person: Person | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("the session id must be a non-empty string")
        #: Who types: stamped on every user message (default: the OS login on the
        #: configured platform, ``cli:<login>``).
        self.person = person if person is not None else Person(config.platform, os_login())
        self._host = host
        self._caps = caps
        self._emit = emit
        self._config = config
        self.session_id = session_id
        self._stand_in = StandInModel(config.stand_in_context_window)
        #: The prompt of the last turn (messages, token figures, contributions).
        self.last_prompt: PromptPlan | None = None
        #: The blocks other plugins contributed to the last prompt (``/recall`` shows them).
        self.last_contributions: list[PromptBlock] = []
        #: Shows a line at once (the CLI prints it to stderr); None: the line goes with the
        #: reply. Used while a turn waits for another process's turn of the session.
        self.notify: Callable[[str], None] | None = None

    # -- what answers ---------------------------------------------------------------------

    @property
    def model(self) -> ChatModel:
        """The bound ``llm`` provider, or the offline stand-in."""
        handle = self._caps.llm
        if handle.present:
            try:
                model: ChatModel = handle.use
                return model
            except CapabilityAbsent:
                pass
        return self._stand_in

    @property
    def model_name(self) -> str:
        try:
            return str(self.model.id)
        except CapabilityAbsent:
            return self._stand_in.id

    def _memory(self) -> Any:
        return self._caps.memory.use  # CapabilityAbsent names the capability and consumer

    # -- input ----------------------------------------------------------------------------

    async def handle(self, line: str) -> Reply:
        """Process one line of input: a slash command or a message to the model."""
        text = line.strip()
        if not text:
            return Reply()
        if text.startswith("/"):
            return await self._command(text)
        return await self._turn(text)

    async def _command(self, text: str) -> Reply:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            return Reply(err=[f"error: {exc}"])
        name, args = words[0].lower(), words[1:]
        if name in ("/quit", "/exit"):
            return Reply(quit=True)
        if name == "/help":
            return Reply(out=HELP.splitlines())
        if name == "/history":
            return await self.history()
        if name == "/clear":
            return await self.clear(args)
        if name == "/compress":
            return await self.compress()
        if name == "/undo":
            return await self.undo()
        if name == "/recall":
            return await self.recall(" ".join(args))
        return Reply(err=[f"error: unknown command {name}; try /help"])

    # -- a turn ---------------------------------------------------------------------------

    def _settings(self) -> TurnSettings:
        config = self._config
        return TurnSettings(
            system_prompt=config.system_prompt,
            max_reply_tokens=config.max_reply_tokens,
            history_fetch=config.history_fetch,
            platform=config.platform,
            contribution_timeout=config.contribution_timeout,
            turn_wait=config.turn_wait,
        )

    async def _turn(self, text: str) -> Reply:
        """One turn through the contract's ``run_turn``: the same rules as any host's."""
        try:
            memory = self._memory()
        except Exception as exc:
            return Reply(err=[f"error: {_one_line(str(exc)) or type(exc).__name__}"])
        model = self.model
        if model is self._stand_in:
            model = self._stand_in.answering(text)  # quotes this turn's words, no others
        notes: list[str] = []

        def waiting() -> None:
            note = f"waiting for another turn in session {self.session_id!r} ..."
            if self.notify is not None:
                self.notify(note)
            else:
                notes.append(note)

        try:
            turn = await run_turn(
                self._host,
                memory,
                model,
                self.session_id,
                text,
                settings=self._settings(),
                compression=self._caps.compression,
                emit=self._emit,
                reply_metadata=self._reply_metadata(model),
                arrange=_arrange,
                person=self.person,
                on_wait=waiting,
            )
        except TurnReplyNotSaved as exc:
            return Reply(out=[f"assistant> {exc.content}"], err=[*notes, f"error: {exc}"])
        except TurnError as exc:
            return Reply(err=[*notes, f"error: {exc}"])
        self.last_prompt = turn.prompt
        self.last_contributions = list(turn.prompt.contributions)
        return Reply(out=[f"assistant> {turn.content}"], err=notes)

    def _reply_metadata(self, model: ChatModel) -> dict[str, Any]:
        """The stand-in only echoes: its replies are marked so recall does not index them."""
        metadata: dict[str, Any] = {"platform": self._config.platform, "model": str(model.id)}
        if isinstance(model, StandInModel):
            metadata["no_recall"] = True
        return metadata

    # -- slash commands -------------------------------------------------------------------

    async def undo(self) -> Reply:
        try:
            outcome = await undo_last_turn(self._memory(), self.session_id, self._emit)
        except UndoError as exc:
            return Reply(err=[f"error: {exc}"])
        except Exception as exc:
            return Reply(err=[f"error: the undo failed: {_one_line(str(exc))}"])
        reply = Reply(out=[f"undone: {len(outcome.messages)} messages deleted"])
        for message in outcome.messages:
            content = message.content if message.content is not None else "(tool call)"
            reply.out.append(f"  {message.role}> {_one_line(content)}")
        return reply

    async def recall(self, query: str) -> Reply:
        """``/recall QUERY``: what the ``recall`` provider finds; without a query, the blocks
        contributed to the last prompt."""
        if not query.strip():
            if not self.last_contributions:
                return Reply(out=["(nothing was added to the last prompt)"])
            reply = Reply()
            for block in self.last_contributions:
                reply.out.append(f"from {block.source}:")
                reply.out.extend(f"  {line}" for line in block.content.splitlines())
            return reply
        handle = self._caps.recall
        if not handle.present:
            return Reply(err=["error: no recall provider is active"])
        try:
            hits = await handle.use.recall(self.session_id, query, platform=self._config.platform)
        except Exception as exc:
            return Reply(err=[f"error: the recall failed: {_one_line(str(exc))}"])
        if not hits:
            return Reply(out=["(nothing recalled)"])
        reply = Reply()
        for hit in hits:
            content = hit.message.content or ""
            why = f" ({hit.source})" if getattr(hit, "source", None) else ""
            reply.out.append(
                f"{hit.score:.3f}{why} [{hit.session_id}] {hit.message.role}> {_one_line(content)}"
            )
        return reply

    async def history(self) -> Reply:
        reply = Reply()
        try:
            memory = self._memory()
            messages: Sequence[Message] = await memory.get_history(self.session_id, math.inf)
        except Exception as exc:
            return Reply(err=[f"error: {_one_line(str(exc))}"])
        handle = self._caps.compression
        if handle.present:
            try:
                record = await handle.use.summary(self.session_id)
            except Exception:
                record = None
            if record is not None:
                reply.out.append(f"summary ({record.model}):")
                reply.out.extend(f"  {line}" for line in record.text.splitlines())
        if not messages:
            reply.out.append(f"(no messages in session {self.session_id!r})")
        for message in messages:
            if message.is_control:
                reply.out.append(f"-- {message.content or message.kind} --")
            else:
                content = message.content if message.content is not None else "(tool call)"
                reply.out.append(f"{message.role}> {content}")
        return reply

    async def clear(self, args: Sequence[str]) -> Reply:
        types: list[str] = []
        rest = list(args)
        while rest:
            word = rest.pop(0)
            if word in ("-t", "--type"):
                if not rest:
                    return Reply(err=["error: -t needs a clear type, e.g. /clear -t summary"])
                types.extend(t for t in rest.pop(0).split(",") if t)
            elif word.startswith("--type="):
                types.extend(t for t in word.split("=", 1)[1].split(",") if t)
            else:
                return Reply(
                    err=[f"error: unexpected argument {word!r}; usage: /clear [-t TYPE ...]"]
                )
        try:
            rows = await run_clear(
                self._host,
                "session",
                session_id=self.session_id,
                types=types or None,
                memory=self._caps.memory,
            )
        except UnknownClearType as exc:
            return Reply(err=[f"error: {exc}"])
        except Exception as exc:
            return Reply(err=[f"error: the clear failed: {_one_line(str(exc))}"])
        reply = Reply()
        for row in rows:
            status = "ok" if row.success else "FAILED"
            line = f"{status} {row.source} [{row.type or '-'}]: {row.message}"
            (reply.out if row.success else reply.err).append(line)
        if not rows:
            reply.out.append("nothing was cleared (no plugin handles these types)")
        return reply

    async def compress(self) -> Reply:
        handle = self._caps.compression
        if not handle.present:
            return Reply(err=[f"error: {COMPRESSION_ABSENT}"])
        service = handle.use
        try:
            detailed = getattr(service, "compress_detailed", None)
            if detailed is None:
                await service.compress(self.session_id, "manual")
                return Reply(out=["compressed"])
            outcome = await detailed(self.session_id, "manual", platform=self._config.platform)
        except CompressionError as exc:
            return Reply(err=[f"error: compression failed ({exc.reason_code}): {exc.message}"])
        except Exception as exc:
            return Reply(err=[f"error: compression failed: {_one_line(str(exc))}"])
        if outcome.record is None:
            return Reply(out=["nothing to compress"])
        return Reply(
            out=[
                f"compressed: {outcome.archived} messages archived, {len(outcome.kept)} kept; "
                f"summary by {outcome.model}"
            ]
        )


__all__ = ["HELP", "ChatSession", "Reply"]
