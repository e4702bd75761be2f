"""The ``recall`` contract: semantic recall of earlier messages, as memory-vector provides it.

It lives beside the store contract because a recall is a store search seen from the chat: the
chat (or any agent) asks for memories relevant to a query in a session, and gets messages
back — with their neighbouring turns, so a recalled answer comes with its question — never
vectors or scores it would have to interpret.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs
from aalis_schema_message import Message

from aalis_api_vectorstore._errors import VectorStoreError


@attrs.frozen(kw_only=True)
class RecallHit:
    """One recalled message.

    ``score`` is the ranking score the provider sorted by (for memory-vector the cosine, or
    the rank-fusion score when its store also searches by words; comparable only within one
    result list). ``source`` says why the hit came: ``"vector"``, ``"lexical"`` or
    ``"both"`` legs of the search found it (None when a provider does not say).
    ``neighbours`` are the messages around it in its session, in time order, the hit itself
    excluded; archived (compressed-away) messages included.
    """

    session_id: str
    message: Message
    score: float
    neighbours: tuple[Message, ...] = ()
    source: str | None = None


@runtime_checkable
class Recall(Protocol):
    """Recall of earlier messages relevant to ``query``, as seen from ``session_id``.

    Which sessions are searched is the provider's scope policy for that session (its
    ``cross_session_mode``); ``platform`` narrows it. ``k`` None means the provider's
    default. Results are best first. A provider that cannot recall right now (no embedder,
    no store) raises ``RecallUnavailable`` rather than returning an empty list that would
    read as "nothing relevant". The rules in full: docs/recall.md ("The recall contract").
    """

    async def recall(
        self,
        session_id: str,
        query: str,
        *,
        k: int | None = None,
        platform: str | None = None,
    ) -> list[RecallHit]:
        """The earlier messages most relevant to ``query`` in this session's scope, best first.

        At most ``k`` (None: the provider's default), each with its neighbouring turns.
        Raises ``RecallUnavailable`` when recall cannot run now, never answers ``[]`` for
        it (docs/recall.md, "The recall contract").
        """
        ...


class RecallUnavailable(VectorStoreError):
    """Recall cannot run (its embedder or store is absent or failing); the message says why."""


__all__ = ["Recall", "RecallHit", "RecallUnavailable"]
