"""The prompt block: recalled hits and their neighbours as excerpts a model can read.

A block that repeats itself costs tokens and misleads: a model that sees one acknowledgement
six times weighs it six times. So (docs/host/recall.md, "The prompt block"): each message at
most once (by id), each text at most once (an answer a person or a model gave in the same words
again is one line), nothing the prompt already carries, the runs of neighbouring hits merged
into one excerpt, excerpts oldest first under the date they start at, and the whole within a
token budget that keeps the best hit first: what is dropped to fit is a neighbour before a hit,
and a worse hit before a better one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from aalis_agent import estimate_text_tokens
from aalis_api_vectorstore import RecallHit
from aalis_schema_message import Message

from aalis_plugin_memory_vector._text import clip, key_of

BLOCK_HEADING = "Recalled from earlier conversations (excerpts, oldest first):"
#: Characters of one message shown at most: a long message gives way to other hits.
LINE_CHARS = 600
_INDENT = "  "


def when(timestamp: int | None) -> str:
    """A message's date and time, local, to the minute (what a person would say)."""
    if timestamp is None:
        return "?"
    try:
        return datetime.fromtimestamp(timestamp / 1000).astimezone().strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(timestamp)


def same_text(text: str | None) -> str:
    """The form two texts are compared in: case and spacing do not make a new line."""
    return " ".join((text or "").split()).casefold()


def _line(message: Message, text: str | None = None) -> str:
    shown = " ".join(clip(message.content or "" if text is None else text, LINE_CHARS).split())
    return f"{_INDENT}{message.role}: {shown}\n"


def _header(session_id: str, first: Message, own_session: str) -> str:
    where = "this session" if session_id == own_session else f"session {session_id}"
    return f"[{when(first.timestamp)}, {where}]\n"


def _fitted(message: Message, room: int) -> str | None:
    """The message's line cut to ``room`` tokens (None when not even a word fits)."""
    text = " ".join((message.content or "").split())
    low, high = 0, min(len(text), LINE_CHARS)
    while low < high:  # the longest prefix whose line fits
        mid = (low + high + 1) // 2
        if estimate_text_tokens(_line(message, text[:mid] + " …")) <= room:
            low = mid
        else:
            high = mid - 1
    return None if low == 0 else _line(message, text[:low] + " …")


class _Run:
    """One hit and its neighbours: consecutive messages of one session."""

    def __init__(self, hit: RecallHit) -> None:
        self.session_id = hit.session_id
        before = [m for m in hit.neighbours if (m.timestamp or 0) <= (hit.message.timestamp or 0)]
        after = [m for m in hit.neighbours if (m.timestamp or 0) > (hit.message.timestamp or 0)]
        self.messages = [*before, hit.message, *after]
        self.keys = [key_of(hit.session_id, m) for m in self.messages]
        # what to keep first when the budget is short: the hit, then the nearest neighbours
        at = len(before)
        order = [at]
        for step in range(1, len(self.messages)):
            order += [i for i in (at - step, at + step) if 0 <= i < len(self.messages)]
        self.priority = order


def block_text(
    session_id: str,
    hits: Sequence[RecallHit],
    exclude: Collection[str],
    *,
    known_texts: Collection[str] = (),
    max_tokens: int,
) -> str | None:
    """The block for ``hits`` (best first), leaving out the message keys in ``exclude`` and
    the texts (compared by ``same_text``) in ``known_texts``; None when nothing is left."""
    runs = [_Run(hit) for hit in hits]
    seen_keys: set[str] = set(exclude)
    seen_texts: set[str] = {same_text(t) for t in known_texts}
    chosen: dict[str, str] = {}  # key -> its line
    headed: set[int] = set()  # runs whose header is already paid for
    used = estimate_text_tokens(BLOCK_HEADING + "\n")
    # hits in rank order first, then their neighbours, nearest first, in rank order
    for depth in range(max((len(r.priority) for r in runs), default=0)):
        for index, run in enumerate(runs):
            if depth >= len(run.priority):
                continue
            message = run.messages[run.priority[depth]]
            key, text = run.keys[run.priority[depth]], same_text(message.content)
            if key in seen_keys or not text or text in seen_texts:
                continue
            line = _line(message)
            header = (
                0
                if index in headed
                else estimate_text_tokens(_header(run.session_id, message, session_id))
            )  # an upper bound: merged runs share one header
            cost = estimate_text_tokens(line) + header
            if used + cost > max_tokens:
                if chosen or depth > 0:
                    continue  # a smaller line further down may still fit
                fitted = _fitted(message, max_tokens - used - header)
                if fitted is None:
                    continue
                line, cost = fitted, estimate_text_tokens(fitted) + header
            seen_keys.add(key)
            seen_texts.add(text)
            chosen[key] = line
            headed.add(index)
            used += cost
    if not chosen:
        return None
    return _render(session_id, runs, chosen)


def _render(session_id: str, runs: list[_Run], chosen: dict[str, str]) -> str:
    """Runs that share a message become one excerpt; excerpts oldest first."""
    groups: list[tuple[str, dict[str, Message]]] = []
    for run in runs:
        members = {k: m for k, m in zip(run.keys, run.messages, strict=True)}
        overlapping = [
            g for g in groups if g[0] == run.session_id and not members.keys().isdisjoint(g[1])
        ]
        for group in overlapping:
            members.update(group[1])
            groups.remove(group)
        groups.append((run.session_id, members))
    excerpts: list[tuple[int, str]] = []
    for run_session, members in groups:
        shown = sorted(
            ((m, k) for k, m in members.items() if k in chosen),
            key=lambda item: (item[0].timestamp or 0, item[1]),
        )
        if not shown:
            continue
        text = _header(run_session, shown[0][0], session_id) + "".join(chosen[k] for _, k in shown)
        excerpts.append((shown[0][0].timestamp or 0, text))
    excerpts.sort(key=lambda item: item[0])
    return BLOCK_HEADING + "\n" + "".join(text for _, text in excerpts).rstrip("\n")


__all__ = ["BLOCK_HEADING", "LINE_CHARS", "block_text", "same_text", "when"]
