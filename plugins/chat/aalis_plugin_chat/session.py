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
from aalis_api_llm import ChatModel
from aalis_api_memory import (
    CompressionError,
    CompressionUsage,
    PromptBlock,
    PromptRequest,
    UndoError,
    UnknownClearType,
    collect_prompt_blocks,
    insert_prompt_blocks,
    run_clear,
    undo_last_turn,
)
from aalis_api_memory.tokens import estimate_message_tokens, estimate_text_tokens
from aalis_schema_message import Message, now_ms

from aalis_core.capability import CapabilityAbsent
from aalis_plugin_chat.config import ChatConfig
from aalis_plugin_chat.standin import StandInModel
from aalis_plugin_chat.turns import conversation_turns

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


class ChatSession:
    """A conversation in session ``session_id`` through the chat plugin's handles."""

    def __init__(
        self,
        *,
        host: Any,
        caps: Any,
        emit: Callable[..., Awaitable[None]],
        config: ChatConfig,
        session_id: str,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("the session id must be a non-empty string")
        self._host = host
        self._caps = caps
        self._emit = emit
        self._config = config
        self.session_id = session_id
        self._stand_in = StandInModel(config.stand_in_context_window)
        self._last_timestamp = 0
        #: The blocks other plugins contributed to the last prompt (``/recall`` shows them).
        self.last_contributions: list[PromptBlock] = []

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

    async def _prompt(self, memory: Any) -> tuple[list[Message], CompressionUsage, int]:
        """System prompt + summary + the newest history that fits, and the usage figures."""
        model = self.model
        window = int(model.context_window)
        budget = max(1, window - self._config.max_reply_tokens)
        head = [Message(role="system", content=self._config.system_prompt)]
        summary = await self._summary()
        if summary is not None:
            head.append(
                Message(role="system", content=f"Summary of the earlier conversation:\n{summary}")
            )
        head_tokens = sum(estimate_message_tokens(m) for m in head)

        fetched = await memory.get_history(self.session_id, self._config.history_fetch)
        conversation = [m for m in fetched if not m.is_control]
        total = len(conversation)
        if total >= self._config.history_fetch and hasattr(memory, "count_history"):
            total = int(await memory.count_history(self.session_id))
        chosen: list[Message] = []
        used = head_tokens
        for message in reversed(conversation):
            tokens = estimate_message_tokens(message)
            if chosen and used + tokens > budget:
                break
            chosen.append(message)
            used += tokens
        chosen.reverse()
        trimmed = len(chosen) < total
        compressible = sum(estimate_message_tokens(m) for m in chosen[:-1])  # the new line stays
        usage = CompressionUsage(
            used=used,
            context_window=window,
            token_budget=budget,
            compressible=compressible,
            trimmed=trimmed,
            history_messages=total,
        )
        # Strict chat templates: no assistant first, no two user messages in a row (turns.py).
        turns, earlier = conversation_turns(chosen)
        return [*head, *([earlier] if earlier is not None else []), *turns], usage, used

    async def _summary(self) -> str | None:
        handle = self._caps.compression
        if not handle.present:
            return None
        try:
            record = await handle.use.summary(self.session_id)
        except (CompressionError, CapabilityAbsent):
            return None
        return record.text if record is not None else None

    async def _turn(self, text: str) -> Reply:
        try:
            memory = self._memory()
            user = Message(
                role="user",
                content=text,
                timestamp=self._next_timestamp(),
                metadata={"platform": self._config.platform},
            )
            await memory.save_message(self.session_id, user)
            await self._announce_saved(user)
            prompt, usage, prompt_tokens = await self._prompt(memory)
        except Exception as exc:
            return Reply(err=[f"error: {_one_line(str(exc)) or type(exc).__name__}"])
        prompt, extra_tokens = await self._with_contributions(
            prompt, text, room=usage.token_budget - prompt_tokens
        )
        prompt_tokens += extra_tokens
        model = self.model
        try:
            result = await model.chat(prompt, max_tokens=self._config.max_reply_tokens)
        except Exception as exc:
            return Reply(
                err=[f"error: the model failed: {_one_line(str(exc)) or type(exc).__name__}"]
            )
        answer = Message(
            role="assistant",
            content=result.content,
            timestamp=self._next_timestamp(),
            metadata=self._reply_metadata(model),
        )
        try:
            await memory.save_message(self.session_id, answer)
        except Exception as exc:
            return Reply(
                out=[f"assistant> {result.content}"],
                err=[f"error: the reply was not saved: {_one_line(str(exc))}"],
            )
        await self._announce_saved(answer)
        if result.usage is not None:
            used = result.usage.prompt_tokens + result.usage.completion_tokens
        else:
            used = prompt_tokens + estimate_text_tokens(result.content)
        usage = attrs.evolve(usage, used=used, history_messages=usage.history_messages + 1)
        await self._emit(
            "token_usage", session_id=self.session_id, platform=self._config.platform, usage=usage
        )
        return Reply(out=[f"assistant> {result.content}"])

    def _reply_metadata(self, model: ChatModel) -> dict[str, Any]:
        """The stand-in only echoes: its replies are marked so recall does not index them."""
        metadata: dict[str, Any] = {"platform": self._config.platform, "model": str(model.id)}
        if model is self._stand_in:
            metadata["no_recall"] = True
        return metadata

    def _next_timestamp(self) -> int:
        """Now, but strictly after the last message this session saved: messages are
        deleted and indexed by timestamp, so two of them must never share one."""
        self._last_timestamp = max(now_ms(), self._last_timestamp + 1)
        return self._last_timestamp

    async def _announce_saved(self, message: Message) -> None:
        """Tell derived indexes (semantic recall) that ``message`` is stored."""
        await self._emit("memory_messages_saved", session_id=self.session_id, messages=[message])

    async def _with_contributions(
        self, prompt: list[Message], query: str, *, room: int
    ) -> tuple[list[Message], int]:
        """``prompt`` with the blocks other plugins contribute, before the last user message,
        and the tokens they add.

        Blocks are taken in hook order while they fit in ``room`` (the tokens the history
        left free), so a long recall never pushes the prompt past the model's window. A
        contributor that fails or is slow is skipped (``collect_prompt_blocks`` contains
        it), so the turn never fails because of one.
        """
        request = PromptRequest(
            session_id=self.session_id,
            query=query,
            platform=self._config.platform,
            history=tuple(prompt),
        )
        try:
            blocks = await collect_prompt_blocks(
                self._host, request, limit_s=self._config.contribution_timeout
            )
        except Exception:
            blocks = []
        fitting: list[PromptBlock] = []
        added = 0
        for block in blocks:
            tokens = estimate_message_tokens(block.to_message())
            if added + tokens > room:
                continue
            fitting.append(block)
            added += tokens
        self.last_contributions = fitting
        return insert_prompt_blocks(prompt, fitting), added

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
            reply.out.append(
                f"{hit.score:.3f} [{hit.session_id}] {hit.message.role}> {_one_line(content)}"
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
            return Reply(err=["error: no compression provider is active"])
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
