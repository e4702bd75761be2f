"""Reindex and check: the index compared with (and rebuilt from) the message store.

**Reindex never leaves a silent hole.** Before a session's vectors are dropped, a mark
naming the whole session is written to the gaps namespace (one metadata commit for every
session in scope); each session's mark is removed only after its vectors are written. A
reindex killed at any instant leaves its unfinished sessions marked, and the next start of
any host backfills them (docs/recall.md, "Gaps").

**Check** compares, per session, the indexable messages of the store (archived included)
with the vectors of the current model: *missing* (no vector), *orphaned* (a vector, of any
model, whose message is gone), *stale* (a vector whose text is no longer the message's).
Missing messages that a recorded gap covers are counted apart: they are waiting for a
backfill, not lost. ``repair`` indexes the missing, deletes the orphans and re-embeds the
stale.

A store with a lexical leg that can check it (``LexicalIndexCheck``) is also asked for its
*lexical* drift: vectors whose lexical entry is missing or not the terms of their text,
counted per session, and entries of no vector (a row of their own, ``LEXICAL_ORPHANS``);
``repair`` has the store rewrite them from the stored text.
"""

from __future__ import annotations

from typing import Any

import attrs
from aalis_api_vectorstore import LexicalDrift, LexicalIndexCheck
from aalis_schema_message import Message

from aalis_plugin_memory_vector._gaps import GAPS_NAMESPACE, Gap, read_entry
from aalis_plugin_memory_vector._indexer import Indexer, IndexOutcome
from aalis_plugin_memory_vector._persons import PersonRegistry
from aalis_plugin_memory_vector._text import INDEXED_ROLES, clip, indexable, key_of


@attrs.frozen
class SessionCheck:
    """One session's figures. ``in_gap`` counts the missing that a recorded gap covers."""

    session_id: str
    messages: int
    indexed: int
    missing: int
    in_gap: int
    orphaned: int
    stale: int
    #: Vectors whose lexical entry is missing or stale (0 for a store that cannot tell).
    lexical: int = 0
    repaired: str | None = None

    @property
    def differs(self) -> bool:
        return bool(self.missing or self.orphaned or self.stale or self.lexical)

    @property
    def holes(self) -> int:
        """Missing messages no gap covers: what would be lost silently."""
        return self.missing - self.in_gap


async def reindex(
    indexer: Indexer, caps: Any, session_id: str | None, persons: PersonRegistry | None = None
) -> dict[str, IndexOutcome]:
    """Re-embed one session, or all of them, from the message store; marks first.

    The person registry of each session is rebuilt from the store too: the store is the
    truth for who speaks where, as for what was said.
    """
    mem = caps.memory.use
    store = caps.vectorstore.use
    if not caps.embedding.present:
        raise LookupError("no embedding provider is active")
    if session_id is None:
        sessions = [info.session_id for info in await mem.list_sessions()]
    else:
        sessions = [session_id]
    marks = await indexer.gaps.mark(dict.fromkeys(sessions), "reindex not finished")
    if session_id is None:
        # Vectors of sessions the store no longer has: nothing to re-embed, nothing to mark.
        for orphan in sorted(set(await store.sessions()) - set(sessions)):
            await _delete_own(store, orphan)
    outcomes: dict[str, IndexOutcome] = {}
    for sid in sessions:
        if persons is not None:
            await persons.rebuild(sid)
        await _delete_own(store, sid)
        messages = await indexer.read_session(sid)
        outcome = outcomes[sid] = await indexer.index_now(sid, messages)
        if outcome.error is None and sid in marks:
            await indexer.gaps.unmark([marks[sid]])
    return outcomes


async def _own_entries(store: Any, session_id: str) -> list[Any]:
    """The vectors of ``session_id`` that recall wrote: those of user and assistant
    messages. Another feature may keep vectors in the same store under roles of its own
    (the LangGraph store's ``item`` and ``marker``, docs/recall.md "Who owns a vector");
    the check, its repair and a reindex never count or delete them."""
    return [e for e in await store.entries(session_id) if e.role in INDEXED_ROLES]


async def _delete_own(store: Any, session_id: str) -> None:
    """Delete recall's vectors of ``session_id``, leaving other features' records."""
    entries = await store.entries(session_id)
    own = [e.message_id for e in entries if e.role in INDEXED_ROLES]
    if len(own) == len(entries):
        await store.delete(session_id)
    elif own:
        await store.delete(session_id, own)


async def _recorded_gaps(indexer: Indexer) -> dict[str, list[Gap]]:
    """Every gap and mark in the store now (any process's), by session."""
    found: dict[str, list[Gap]] = {}
    memory = indexer._memory
    if not memory.present:
        return found
    for entry in await memory.use.list_metadata(GAPS_NAMESPACE):
        read = read_entry(entry.key, entry.data)
        if read is not None:
            found.setdefault(read[0], []).append(read[1])
    return found


#: The row of ``aalis vector check`` for lexical entries that belong to no vector.
LEXICAL_ORPHANS = "(lexical, no vector)"


async def check_session(
    indexer: Indexer,
    store: Any,
    model_id: str,
    session_id: str,
    gaps: list[Gap],
    lexical: LexicalDrift | None = None,
) -> tuple[SessionCheck, list[Message], list[str], list[Message]]:
    """The figures of one session, and what a repair would do: (check, missing messages,
    orphaned ids, stale messages). ``lexical`` is the store's lexical drift (of this
    session or a wider one: only this session's vectors are counted)."""
    limit = indexer._config.max_text_chars
    stored = await indexer.read_session(session_id)
    by_key = {key_of(session_id, m): m for m in stored}
    wanted = {k: m for k, m in by_key.items() if indexable(m)}
    entries = await _own_entries(store, session_id)
    current = {e.message_id: e for e in entries if e.model_id == model_id}
    orphaned = [e.message_id for e in entries if e.message_id not in wanted]
    stale = [
        wanted[k]
        for k, e in current.items()
        if k in wanted and clip(wanted[k].content or "", limit) != e.text
    ]
    missing = [m for k, m in wanted.items() if k not in current]
    in_gap = sum(1 for m in missing if any(g.covers(m.timestamp) for g in gaps))
    drifted = set(lexical.missing + lexical.stale) if lexical is not None else set()
    figures = SessionCheck(
        lexical=sum(1 for e in entries if e.message_id in drifted),
        session_id=session_id,
        messages=len(wanted),
        indexed=sum(1 for k in current if k in wanted) - len(stale),
        missing=len(missing),
        in_gap=in_gap,
        orphaned=len(orphaned),
        stale=len(stale),
    )
    return figures, missing, orphaned, stale


async def check_index(
    indexer: Indexer, caps: Any, session_id: str | None, *, repair: bool = False
) -> list[SessionCheck]:
    """The per-session comparison of index and store (and, with ``repair``, the fix)."""
    if not caps.vectorstore.present:
        raise LookupError("no vector store is active")
    if not caps.embedding.present:
        raise LookupError("no embedding provider is active")
    mem = caps.memory.use
    store = caps.vectorstore.use
    model_id = str(caps.embedding.use.model_id)
    # Gaps first: a backfill that finishes while this runs removes its gap only after its
    # vectors are written, so a message is never seen missing and outside a gap by mistake.
    gaps = await _recorded_gaps(indexer)
    known: set[str] = set()
    if session_id is not None:
        sessions = [session_id]
        known = {session_id}
    else:
        known = {info.session_id for info in await mem.list_sessions()}
        sessions = sorted(known | set(await store.sessions()))
    results: list[SessionCheck] = []
    checks_lexical = isinstance(store, LexicalIndexCheck)
    # One store-wide lexical check for a check of every session (it also finds the
    # entries of no vector); a session's own otherwise.
    whole = await store.lexical_check(None) if checks_lexical and session_id is None else None
    for sid in sessions:
        drift = whole
        if checks_lexical and drift is None:
            drift = await store.lexical_check(sid)
        figures, missing, orphaned, stale = await check_session(
            indexer, store, model_id, sid, gaps.get(sid, []), drift
        )
        if sid not in known and not (figures.orphaned or figures.lexical):
            continue  # a session of another feature's vectors only: not recall's to report
        if repair and figures.differs:
            notes: list[str] = []
            if orphaned:
                await store.delete(sid, orphaned)
                notes.append(f"{len(orphaned)} orphans deleted")
            redo = missing + stale
            if redo:
                if stale:
                    await store.delete(sid, [key_of(sid, m) for m in stale])
                outcome = await indexer.index_now(sid, redo)
                notes.append(
                    f"{outcome.indexed} indexed"
                    if outcome.error is None
                    else f"indexing failed: {outcome.error}"
                )
            if figures.lexical:
                fixed = await store.lexical_repair(sid)
                notes.append(f"{len(fixed.missing) + len(fixed.stale)} lexical entries rewritten")
            figures = attrs.evolve(figures, repaired=", ".join(notes))
        results.append(figures)
    if whole is not None and whole.extra:
        # Entries of no vector name no session: a row of their own.
        extra = SessionCheck(
            session_id=LEXICAL_ORPHANS,
            messages=0,
            indexed=0,
            missing=0,
            in_gap=0,
            orphaned=0,
            stale=0,
            lexical=whole.extra,
        )
        if repair:
            fixed = await store.lexical_repair(None)
            extra = attrs.evolve(extra, repaired=f"{fixed.extra} lexical entries dropped")
        results.append(extra)
    if repair:
        # A session with nothing missing any more needs none of the gaps read above.
        for sid in sessions:
            read = set().union(*(g.keys for g in gaps.get(sid, [])))
            if not read and indexer.gaps.get(sid) is None:
                continue
            after, *_ = await check_session(indexer, store, model_id, sid, [])
            if not after.missing:
                await indexer.gaps.forget(sid, read)
    return results


__all__ = ["LEXICAL_ORPHANS", "SessionCheck", "check_index", "check_session", "reindex"]
