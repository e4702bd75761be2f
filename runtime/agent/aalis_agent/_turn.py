"""One agent turn, as every host should run it: ``run_turn``.

What makes memory work is not the store alone but what an agent does around each model
call: save the user's message, build the prompt from the summary, the newest history that
fits the model's budget and what other plugins contribute (recall), call the model, save
the reply, then tell the others — ``memory_messages_saved`` so indexes follow, and
``token_usage`` so automatic compression can decide. ``aalis chat`` runs exactly this; a
host author calls the same function instead of re-deriving the rules.

The model is the ``llm`` contract's ``ChatModel`` (``id``, ``context_window`` and an async
``chat`` returning a ``ChatResult``): the agent runtime sits above the contracts, so it takes
the real type rather than a structural copy of it. See docs/reference/turn.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
from aalis_api_llm import ChatModel, ChatResult
from aalis_api_memory import (
    AalisMemoryError,
    CompressionError,
    CompressionService,
    CompressionUsage,
    FullHistory,
    LeaseFailed,
    LeaseWaitTimeout,
    MemoryService,
    Person,
    PersonLike,
    supports,
)
from aalis_schema_message import Message

from aalis_agent._saving import SESSION_CLOCK, SessionClock, announce_saved, stamped
from aalis_agent._tokens import estimate_message_tokens, estimate_text_tokens
from aalis_agent._turn_lease import hold_turn
from aalis_core import CapabilityAbsent, HostServices, get_logger, positive_int, positive_seconds

if TYPE_CHECKING:
    from aalis_core import Handle

    #: A compression handle or service, as a turn takes it (None: no compression).
    CompressionTarget = Handle[CompressionService] | CompressionService

SUMMARY_HEADER = "Summary of the earlier conversation:\n"
CONTRIBUTIONS_HOOK = "prompt_contributions"


# -- settings, results, errors -----------------------------------------------------------


@attrs.frozen(kw_only=True)
class TurnSettings:
    """How a turn is run; the chat's ``[plugins.chat]`` table maps onto it one to one."""

    #: The first message of every prompt (None: no system prompt).
    system_prompt: str | None = None
    #: Tokens reserved for the reply (sent as ``max_tokens``).
    max_reply_tokens: int = attrs.field(default=1024, validator=positive_int)
    #: Conversation messages read from memory for one prompt, at most (the newest ones).
    history_fetch: int = attrs.field(default=200, validator=positive_int)
    #: ``metadata["platform"]`` of the saved messages and of the ``token_usage`` event.
    platform: str | None = None
    #: Seconds one prompt contributor may take before its block is dropped for the turn.
    contribution_timeout: float = attrs.field(default=5.0, validator=positive_seconds)
    temperature: float | None = None
    #: Seconds a turn waits for another turn of the same session (another process, another
    #: task) to finish before it gives up with ``TurnBusy`` (docs/reference/turn.md).
    turn_wait: float = attrs.field(default=120.0, validator=positive_seconds)


@attrs.frozen(kw_only=True)
class PromptPlan:
    """A prompt ready for the model, and the figures the ``token_usage`` event reports."""

    messages: tuple[Message, ...]
    usage: CompressionUsage
    #: Estimated tokens of ``messages``.
    tokens: int
    #: How many leading messages are the head (system prompt, summary), not history.
    head: int = 0
    #: Blocks other plugins contributed (``PromptBlock``s), in prompt order.
    contributions: tuple[Any, ...] = ()


@attrs.frozen(kw_only=True)
class TurnResult:
    """A finished turn: both messages as stored, the prompt sent, the model's raw result."""

    session_id: str
    user: Message
    reply: Message
    prompt: PromptPlan
    usage: CompressionUsage
    result: ChatResult

    @property
    def content(self) -> str:
        return self.reply.content or ""


class TurnError(AalisMemoryError):
    """A turn stopped part-way; ``stage`` says where, ``user`` is the saved user message
    (None when even that failed). The cause is chained (``__cause__``)."""

    stage = "prepare"

    def __init__(self, message: str, *, user: Message | None = None) -> None:
        super().__init__(message)
        self.user = user


class TurnBusy(TurnError):
    """Another turn of the session held it for the whole ``turn_wait``; nothing was saved."""

    stage = "wait"


class TurnModelFailed(TurnError):
    """The model call raised; the user's message is saved, no reply is."""

    stage = "model"


class TurnReplyNotSaved(TurnError):
    """The model answered but its reply could not be saved; ``content`` is the answer."""

    stage = "save-reply"

    def __init__(self, message: str, *, user: Message | None, content: str) -> None:
        super().__init__(message, user=user)
        self.content = content


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# -- building the prompt -----------------------------------------------------------------


async def session_summary(compression: CompressionTarget | None, session_id: str) -> str | None:
    """The session's summary text from a compression handle or service (None when there is
    no provider, no summary, or the provider fails: a turn never fails for a summary)."""
    if compression is None:
        return None
    try:
        if hasattr(compression, "present"):
            handle = cast("Handle[CompressionService]", compression)
            if not handle.present:
                return None
            compression = handle.use
        record = await compression.summary(session_id)
    except (CompressionError, CapabilityAbsent):
        return None
    return record.text if record is not None else None


async def build_prompt(
    memory: MemoryService,
    model: ChatModel,
    session_id: str,
    *,
    settings: TurnSettings,
    compression: CompressionTarget | None = None,
    arrange: Callable[[Sequence[Message]], Sequence[Message]] | None = None,
) -> PromptPlan:
    """System prompt + summary + the newest history that fits the model's budget.

    The budget is ``context_window - max_reply_tokens``. History is taken newest first
    until the next message would overflow it (the newest one always goes in); control
    markers never go to a model. ``usage.trimmed`` tells that older messages were left out,
    and ``usage.compressible`` counts the tokens compression could take (everything
    but the newest message).
    """
    window = int(model.context_window)
    budget = max(1, window - settings.max_reply_tokens)
    head: list[Message] = []
    if settings.system_prompt is not None:
        head.append(Message(role="system", content=settings.system_prompt))
    summary = await session_summary(compression, session_id)
    if summary is not None:
        head.append(Message(role="system", content=SUMMARY_HEADER + summary))
    head_tokens = sum(estimate_message_tokens(m) for m in head)

    fetched = await memory.get_history(session_id, settings.history_fetch)
    conversation = [m for m in fetched if not m.is_control]
    total = len(conversation)
    if total >= settings.history_fetch and supports(memory, FullHistory, "count_history"):
        total = int(await memory.count_history(session_id))
    chosen: list[Message] = []
    used = head_tokens
    for message in reversed(conversation):
        tokens = estimate_message_tokens(message)
        if chosen and used + tokens > budget:
            break
        chosen.append(message)
        used += tokens
    chosen.reverse()
    usage = CompressionUsage(
        used=used,
        context_window=window,
        token_budget=budget,
        compressible=sum(estimate_message_tokens(m) for m in chosen[:-1]),
        trimmed=len(chosen) < total,
        history_messages=total,
    )
    # ``arrange`` reshapes the chosen history for the model (a strict chat template wants
    # a user message first and no two in a row); the figures stay those of what was chosen.
    shown = list(arrange(chosen)) if arrange is not None else chosen
    return PromptPlan(messages=(*head, *shown), usage=usage, tokens=used, head=len(head))


def _prompt_module() -> Any:
    """The prompt-contribution helpers of this contract, when this version ships them."""
    try:
        return importlib.import_module("aalis_agent._prompt")
    except ImportError:
        return None


async def add_contributions(
    host: HostServices, plan: PromptPlan, session_id: str, query: str, *, settings: TurnSettings
) -> PromptPlan:
    """``plan`` with the blocks plugins contribute (``prompt_contributions``), placed after
    the history and before the newest user message, so the shared head of the prompt stays
    cacheable.

    Blocks are taken in hook order while they fit in the room the history left in the
    budget (a block that does not fit is skipped, a later smaller one may still go in), so
    a long recall never pushes the prompt past the model's window and never displaces the
    conversation. A failing or slow contributor is skipped (never fails the turn).
    """
    helpers = _prompt_module()
    if host is None or helpers is None:
        return plan
    try:
        host.hook_impls(CONTRIBUTIONS_HOOK)
    except ValueError:  # no loaded contract declares it
        return plan
    request = helpers.PromptRequest(
        session_id=session_id, query=query, platform=settings.platform, history=plan.messages
    )
    try:
        blocks = list(
            await helpers.collect_prompt_blocks(
                host, request, limit_s=settings.contribution_timeout
            )
        )
    except Exception:
        blocks = []
    room = plan.usage.token_budget - plan.tokens
    fitting: list[Any] = []
    added = 0
    for block in blocks:
        tokens = estimate_message_tokens(block.to_message())
        if added + tokens > room:
            continue
        fitting.append(block)
        added += tokens
    if not fitting:
        return plan
    return PromptPlan(
        messages=tuple(helpers.insert_prompt_blocks(list(plan.messages), fitting)),
        usage=plan.usage,
        tokens=plan.tokens + added,
        head=plan.head,
        contributions=tuple(fitting),
    )


# -- the turn ----------------------------------------------------------------------------


async def run_turn(
    host: HostServices,
    memory: MemoryService,
    model: ChatModel,
    session_id: str,
    text: str,
    *,
    settings: TurnSettings | None = None,
    compression: CompressionTarget | None = None,
    emit: Callable[..., Awaitable[None]] | None = None,
    reply_metadata: Mapping[str, Any] | None = None,
    arrange: Callable[[Sequence[Message]], Sequence[Message]] | None = None,
    clock: SessionClock = SESSION_CLOCK,
    person: PersonLike | None = None,
    on_wait: Callable[[], Awaitable[None] | None] | None = None,
) -> TurnResult:
    """Run one turn of ``session_id``: ``text`` in, the model's reply out, both saved.

    ``host`` emits the events and collects prompt contributions; ``memory`` is a
    ``MemoryService`` (a handle's ``use``); ``compression`` a compression handle or service
    (for the summary), or None. ``emit`` replaces ``host.emit`` (a plugin passes
    ``ctx.emit``). ``reply_metadata`` is added to the reply's metadata (after ``platform``
    and ``model``), e.g. a marker that keeps a stand-in's echo out of recall. ``arrange``
    reshapes the chosen history before it goes to the model (see ``build_prompt``).
    ``person`` (a ``Person``, or anything with ``platform`` and ``user_id``) is who speaks:
    stamped on the user message, so recall scopes and forgetting know whose words it holds.
    Raises ``TurnError`` (nothing was asked of the model), ``TurnModelFailed`` or
    ``TurnReplyNotSaved``, each chaining the cause.

    The whole turn (save the question, read the history, ask the model, save the reply)
    holds the session's turn lease in the store (``aalis_api_memory._leases``), so two
    callers on one session, in any processes, take turns instead of interleaving. A second
    caller waits up to ``settings.turn_wait`` seconds (``on_wait`` is called once when it
    starts waiting), then raises ``TurnBusy`` having saved nothing.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("the session id must be a non-empty string")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a turn needs a non-empty text")
    settings = _with_speaker(settings or TurnSettings(), person)
    try:
        async with hold_turn(
            memory, session_id, wait_s=settings.turn_wait, on_wait=on_wait, log=_log(host)
        ):
            return await _turn(
                host,
                memory,
                model,
                session_id,
                text,
                settings=settings,
                compression=compression,
                emit=emit,
                reply_metadata=reply_metadata,
                arrange=arrange,
                clock=clock,
                person=person,
            )
    except LeaseWaitTimeout as exc:
        raise TurnBusy(f"{exc}; try again later") from exc
    except LeaseFailed as exc:
        raise TurnError(str(exc)) from exc


def _log(host: HostServices) -> Any:
    return get_logger("turn")


async def _turn(
    host: HostServices,
    memory: MemoryService,
    model: ChatModel,
    session_id: str,
    text: str,
    *,
    settings: TurnSettings,
    compression: CompressionTarget | None,
    emit: Callable[..., Awaitable[None]] | None,
    reply_metadata: Mapping[str, Any] | None,
    arrange: Callable[[Sequence[Message]], Sequence[Message]] | None,
    clock: SessionClock,
    person: PersonLike | None,
) -> TurnResult:
    """The turn itself, with the session's turn held (``run_turn``)."""
    send = emit if emit is not None else host.emit
    user_metadata = {"platform": settings.platform} if settings.platform is not None else None
    question = Message(role="user", content=text, metadata=user_metadata)
    if person is not None:
        question = Person.of(person).stamp(question)
    user: Message | None = None
    try:
        user = stamped(question, session_id, clock)
        await memory.save_message(session_id, user)
        await _announce(host, send, session_id, user)
        plan = await build_prompt(
            memory, model, session_id, settings=settings, compression=compression, arrange=arrange
        )
    except Exception as exc:
        raise TurnError(_reason(exc), user=user) from exc
    plan = await add_contributions(host, plan, session_id, text, settings=settings)
    try:
        result = await model.chat(
            plan.messages, temperature=settings.temperature, max_tokens=settings.max_reply_tokens
        )
    except Exception as exc:
        raise TurnModelFailed(f"the model failed: {_reason(exc)}", user=user) from exc
    content = str(result.content)
    metadata: dict[str, Any] = {"model": str(model.id)}
    if settings.platform is not None:
        metadata = {"platform": settings.platform, **metadata}
    metadata.update(reply_metadata or {})
    reply = stamped(
        Message(role="assistant", content=content, metadata=metadata), session_id, clock
    )
    try:
        await memory.save_message(session_id, reply)
    except Exception as exc:
        raise TurnReplyNotSaved(
            f"the reply was not saved: {_reason(exc)}", user=user, content=content
        ) from exc
    await _announce(host, send, session_id, reply)
    reported = result.usage
    if reported is not None:
        used = int(reported.prompt_tokens) + int(reported.completion_tokens)
    else:
        used = plan.tokens + estimate_text_tokens(content)
    usage = attrs.evolve(plan.usage, used=used, history_messages=plan.usage.history_messages + 1)
    await send("token_usage", session_id=session_id, platform=settings.platform, usage=usage)
    return TurnResult(
        session_id=session_id, user=user, reply=reply, prompt=plan, usage=usage, result=result
    )


def _with_speaker(settings: TurnSettings, person: PersonLike | None) -> TurnSettings:
    """``settings`` whose platform is the speaker's (the reply and ``token_usage`` carry it);
    a person on another platform than the settings name is a caller's mistake."""
    if person is None:
        return settings
    speaker = Person.of(person)
    if settings.platform is None:
        return attrs.evolve(settings, platform=speaker.platform)
    if settings.platform != speaker.platform:
        raise ValueError(
            f"the person's platform {speaker.platform!r} differs from the settings' "
            f"platform {settings.platform!r}"
        )
    return settings


async def _announce(
    host: HostServices, send: Callable[..., Awaitable[None]], session_id: str, message: Message
) -> None:
    if send is getattr(host, "emit", None):
        await announce_saved(host, session_id, [message])
        return
    try:
        host.hook_impls("memory_messages_saved")
    except (ValueError, AttributeError):
        return
    await send("memory_messages_saved", session_id=session_id, messages=[message])


__all__ = [
    "SUMMARY_HEADER",
    "PromptPlan",
    "TurnBusy",
    "TurnError",
    "TurnModelFailed",
    "TurnReplyNotSaved",
    "TurnResult",
    "TurnSettings",
    "add_contributions",
    "build_prompt",
    "run_turn",
    "session_summary",
]
