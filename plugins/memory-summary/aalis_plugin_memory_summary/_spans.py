"""Where a compression cuts, and which messages of the compressed span stay verbatim.

Pure functions over a snapshot ``S = get_history(sid, inf)`` so that every rule of
steps 1 and 3 of the algorithm (docs/compression.md) is testable without a store or a model.
Positions are indexes into ``S``; markers (control kinds) occupy positions, exactly as
``archive_span`` counts them.

A *tool group* is an assistant message with ``tool_calls`` plus the ``tool`` messages that
answer those calls. A chat-completions server refuses a tool result whose call is missing
(and usually a call without its results), so a group is never cut by the split and is kept
or compressed as a whole.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import attrs
from aalis_agent import estimate_message_tokens
from aalis_schema_message import Message


@attrs.frozen
class ToolGroup:
    """An assistant tool call at ``call`` and the positions of its results.

    ``complete`` is False while some call has no result in the snapshot yet (the agent is
    still running the tool): such a group must stay after the split.
    """

    call: int
    results: tuple[int, ...]
    complete: bool

    @property
    def positions(self) -> tuple[int, ...]:
        return (self.call, *self.results)

    @property
    def end(self) -> float:
        """Last position of the group; infinity while results are missing."""
        if not self.complete:
            return math.inf
        return max(self.positions)


def tool_groups(snapshot: Sequence[Message]) -> list[ToolGroup]:
    """Every tool group of the snapshot, in order of the call.

    One pass: each call waits for its ids, and a result answers every call still waiting for
    its id (the first answer per id counts). Scanning the rest of the snapshot for each call
    instead made a long session with tool rounds quadratic to compress.
    """
    calls: list[tuple[int, frozenset[str], list[int], set[str]]] = []
    waiting: dict[str, list[int]] = {}  # call id -> indexes into ``calls`` still waiting
    for index, message in enumerate(snapshot):
        if message.is_control:
            continue
        if message.role == "assistant" and message.tool_calls:
            ids = frozenset(call.id for call in message.tool_calls)
            for call_id in ids:
                waiting.setdefault(call_id, []).append(len(calls))
            calls.append((index, ids, [], set()))
        elif message.role == "tool" and message.tool_call_id is not None:
            for waiter in waiting.pop(message.tool_call_id, ()):
                _, _, results, answered = calls[waiter]
                results.append(index)
                answered.add(message.tool_call_id)
    return [
        ToolGroup(call, tuple(results), answered == ids) for call, ids, results, answered in calls
    ]


def split_point(snapshot: Sequence[Message], groups: Sequence[ToolGroup] | None = None) -> int:
    """``len(S)``, moved back until no tool group straddles it (docs/compression.md, step 1)."""
    if groups is None:
        groups = tool_groups(snapshot)
    point = len(snapshot)
    moved = True
    while moved:
        moved = False
        for group in groups:
            if group.call < point <= group.end:
                point = group.call
                moved = True
    return point


def _turn_start(snapshot: Sequence[Message], index: int) -> int | None:
    """Where the turn holding ``index`` starts: its first user message (a run of user
    messages, e.g. a failed turn's question and its retry, is one turn); None without one."""
    position = index
    while position >= 0 and not (
        not snapshot[position].is_control and snapshot[position].role == "user"
    ):
        position -= 1
    if position < 0:
        return None
    start = position
    for earlier in range(position - 1, -1, -1):
        message = snapshot[earlier]
        if message.is_control:
            continue
        if message.role != "user":
            break
        start = earlier
    return start


def _finished(message: Message) -> bool:
    """A turn ends with the assistant's answer: not a question, a tool call or a result."""
    return message.role == "assistant" and not message.tool_calls


def turn_split(snapshot: Sequence[Message], groups: Sequence[ToolGroup] | None = None) -> int:
    """``split_point`` moved back to a turn boundary (docs/compression.md, "Turn boundaries").

    Before the split the last turn must be finished (a question whose answer has not arrived,
    or whose turn failed, stays active with it), and after the split the first conversation
    message must not be a reply to a question before it. Histories without user messages
    (a broadcast, imported notes) have no turns and keep the tool-group split.
    """
    if groups is None:
        groups = tool_groups(snapshot)
    point = split_point(snapshot, groups)
    while True:
        last = next((i for i in range(point - 1, -1, -1) if not snapshot[i].is_control), None)
        if last is None:
            return point
        moved: int | None = None
        if not _finished(snapshot[last]):
            moved = _turn_start(snapshot, last)
        else:
            first = next(
                (i for i in range(point, len(snapshot)) if not snapshot[i].is_control), None
            )
            if first is not None and snapshot[first].role != "user":
                moved = _turn_start(snapshot, first)
        final = False
        if moved is not None and not any(not snapshot[i].is_control for i in range(moved)):
            # A session of unanswered questions only (notes, a bot that never replied):
            # the newest question alone waits for its answer.
            moved = last if snapshot[last].role == "user" else None
            final = True
        if moved is None or moved >= point:
            return point
        point = split_point(snapshot[:moved], [g for g in groups if g.call < moved])
        point = min(point, moved)
        if final:
            return point


_LABEL = re.compile(r"\s*#?\s*(\d+)\s*\Z")


def parse_label(entry: object) -> int | None:
    """A keep entry as a position: ``3``, ``"#3"`` or ``"3"``; anything else is None."""
    if isinstance(entry, bool):
        return None
    if isinstance(entry, int):
        return entry if entry >= 0 else None
    if isinstance(entry, str):
        match = _LABEL.match(entry)
        if match:
            return int(match.group(1))
    return None


@attrs.frozen
class KeepChoice:
    """The validated keep list and the figures the caps were checked against."""

    positions: tuple[int, ...]
    kept_tokens: int
    kept_messages: int
    token_cap: float
    count_cap: int | None


def conversation_positions(snapshot: Sequence[Message], start: int, stop: int) -> list[int]:
    return [i for i in range(start, stop) if not snapshot[i].is_control]


def select_keep(
    snapshot: Sequence[Message],
    split: int,
    picks: Iterable[object],
    *,
    keep_ratio: float,
    history_limit: int,
    groups: Sequence[ToolGroup] | None = None,
) -> KeepChoice:
    """The model's keep picks, reduced to what step 3 of the algorithm (docs/compression.md) allows.

    - A pick must name a conversation message inside the span (``0 <= pos < split``,
      not a marker); anything else is ignored.
    - A pick inside a tool group stands for the whole group; a tool result whose call is no
      longer in the snapshot (orphaned) can never be kept whole, so it is ignored.
    - Picks are taken newest first and the walk stops at the first pick that would break a
      cap: kept tokens <= ``keep_ratio`` x tokens of the compressed conversation, and, when
      ``history_limit > 0``, kept + post-split conversation messages <= history_limit // 2.
    """
    if groups is None:
        groups = tool_groups(snapshot)
    span_conversation = conversation_positions(snapshot, 0, split)
    compressed_tokens = sum(estimate_message_tokens(snapshot[i]) for i in span_conversation)
    token_cap = keep_ratio * compressed_tokens
    after_split = len(conversation_positions(snapshot, split, len(snapshot)))
    count_cap = history_limit // 2 if history_limit > 0 else None

    group_of: dict[int, ToolGroup] = {}
    for group in groups:
        if group.call < split:
            for position in group.positions:
                group_of[position] = group

    units: dict[tuple[int, ...], int] = {}  # positions -> newest position (sort key)
    for pick in picks:
        label = parse_label(pick)
        if label is None or label >= split or snapshot[label].is_control:
            continue
        position = label
        owner = group_of.get(position)
        if owner is not None:
            unit = owner.positions
        elif snapshot[position].role == "tool" and snapshot[position].tool_call_id:
            continue  # an orphaned tool result: its call was compressed earlier
        elif snapshot[position].role == "assistant" and snapshot[position].tool_calls:
            continue  # a call whose group is not in the span (cannot happen after split_point)
        else:
            unit = (position,)
        units[unit] = max(unit)

    kept: list[int] = []
    kept_tokens = 0
    for unit in sorted(units, key=lambda u: units[u], reverse=True):
        tokens = sum(estimate_message_tokens(snapshot[i]) for i in unit)
        if kept_tokens + tokens > token_cap:
            break
        if count_cap is not None and len(kept) + len(unit) + after_split > count_cap:
            break
        kept.extend(unit)
        kept_tokens += tokens
    return KeepChoice(
        positions=tuple(sorted(kept)),
        kept_tokens=kept_tokens,
        kept_messages=len(kept),
        token_cap=token_cap,
        count_cap=count_cap,
    )


__all__ = [
    "KeepChoice",
    "ToolGroup",
    "conversation_positions",
    "parse_label",
    "select_keep",
    "split_point",
    "tool_groups",
    "turn_split",
]
