"""The records, filters, hits and statistics a ``VectorStore`` trades in.

A record is keyed by ``message_id`` — the id the message has in the message store
(``Message.id``), so a delete or rewrite there maps to exactly one vector here even when two
messages share a millisecond — and carries the fields recall filters on. The scope filter is a required argument of every search: a
forgotten filter is how one user's memories leak to another, so "every session" has to be
said explicitly (``session_ids=None``) and every other field narrows, never widens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs


def _str(inst: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a str, got {type(value).__name__}")


def _non_empty_str(inst: object, attribute: attrs.Attribute[str], value: object) -> None:
    _str(inst, attribute, value)
    if not value:
        raise ValueError(f"{attribute.name} must not be empty")


def _optional_str(inst: object, attribute: attrs.Attribute[str | None], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a str or None, got {type(value).__name__}")


def _timestamp(inst: object, attribute: attrs.Attribute[int], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int (epoch ms), got {type(value).__name__}")


def _vector(inst: object, attribute: attrs.Attribute[Sequence[float]], value: object) -> None:
    # Only the shape is checked here: a store checks the values in bulk (numpy, SQL), which
    # is what keeps a million-row upsert from paying a Python loop per float.
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__len__"):
        raise TypeError(f"vector must be a sequence of floats, got {type(value).__name__}")
    if len(value) == 0:
        raise ValueError("vector must not be empty")


def _str_set(value: object) -> frozenset[str]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise TypeError(
            f"expected a set or list of str, got {type(value).__name__} "
            "(a single str would be read as its characters)"
        )
    items = frozenset(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"expected str items, got {type(item).__name__}")
    return items


def _optional_str_set(value: object) -> frozenset[str] | None:
    return None if value is None else _str_set(value)


#: The identity of one stored vector: the id of the message it was made from.
VectorKey = str


@attrs.frozen(kw_only=True)
class VectorRecord:
    """One message's vector with what recall filters on and shows.

    ``message_id`` is the key (one vector per message); ``session_id``, ``timestamp`` and
    ``role`` say where the message lives and are not unique (two messages of one session
    may share a millisecond and a role). ``vector`` may be any sized sequence of floats (a
    list, a tuple, a numpy row); it is not part of equality. ``platform`` and ``user_id``
    are None when the message had none.
    """

    message_id: str = attrs.field(validator=_non_empty_str)
    session_id: str = attrs.field(validator=_str)
    timestamp: int = attrs.field(validator=_timestamp)
    role: str = attrs.field(validator=_non_empty_str)
    model_id: str = attrs.field(validator=_non_empty_str)
    text: str = attrs.field(validator=_str)
    vector: Sequence[float] = attrs.field(validator=_vector, eq=False, repr=False)
    platform: str | None = attrs.field(default=None, validator=_optional_str)
    user_id: str | None = attrs.field(default=None, validator=_optional_str)

    @property
    def key(self) -> VectorKey:
        return self.message_id


@attrs.frozen(kw_only=True)
class ScopeFilter:
    """Which records a search may return. Applied inside the store's query, never after it,
    so ``k`` matches come back whenever ``k`` exist in scope.

    * ``model_id`` (required): the vector space; other models' vectors are never compared.
    * ``session_ids`` (required): the sessions in scope, or None for every session. An
      empty set matches nothing.
    * ``platform`` / ``user_id``: when set, only records with exactly that value (a record
      without one does not match).
    * ``exclude_session_ids``: never these sessions, whatever else matches.
    * ``roles``: when set, only these roles; an empty set matches nothing.
    """

    model_id: str = attrs.field(validator=_non_empty_str)
    session_ids: frozenset[str] | None = attrs.field(converter=_optional_str_set)
    platform: str | None = attrs.field(default=None, validator=_optional_str)
    user_id: str | None = attrs.field(default=None, validator=_optional_str)
    exclude_session_ids: frozenset[str] = attrs.field(default=frozenset(), converter=_str_set)
    roles: frozenset[str] | None = attrs.field(default=None, converter=_optional_str_set)

    @classmethod
    def session(cls, model_id: str, session_id: str, **narrowing: str | None) -> ScopeFilter:
        """The filter of one session (``cross_session_mode = "isolated"``)."""
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, got {type(session_id).__name__}")
        return cls(model_id=model_id, session_ids=frozenset({session_id}), **narrowing)

    def matches(
        self,
        *,
        session_id: str,
        role: str,
        model_id: str,
        platform: str | None,
        user_id: str | None,
    ) -> bool:
        """The reference reading of the filter, for stores that filter in Python and for tests."""
        return (
            model_id == self.model_id
            and (self.session_ids is None or session_id in self.session_ids)
            and session_id not in self.exclude_session_ids
            and (self.platform is None or platform == self.platform)
            and (self.user_id is None or user_id == self.user_id)
            and (self.roles is None or role in self.roles)
        )

    @property
    def is_empty(self) -> bool:
        """True when no record can match (an empty session or role set)."""
        return (
            self.session_ids is not None and not (self.session_ids - self.exclude_session_ids)
        ) or (self.roles is not None and not self.roles)


@attrs.frozen(kw_only=True)
class VectorHit:
    """One search result: the record's fields (without its vector) and its score: the
    cosine for ``search``, a positive lexical rank for ``lexical_search``."""

    message_id: str
    session_id: str
    timestamp: int
    role: str
    model_id: str
    text: str
    platform: str | None
    user_id: str | None
    #: ``search``: cosine similarity with the query, in [-1, 1] (0.0 when either vector is
    #: all zeros); ``lexical_search``: the lexical rank, > 0, higher is better
    score: float

    @property
    def key(self) -> VectorKey:
        return self.message_id


@attrs.frozen(kw_only=True)
class VectorEntry:
    """What ``entries`` lists for one stored vector: everything but the vector itself, so
    a check can compare the index with the message store without reading the floats."""

    message_id: str
    session_id: str
    timestamp: int
    role: str
    model_id: str
    text: str


@attrs.frozen(kw_only=True)
class ModelStats:
    """How many vectors of one model the store holds, and their width."""

    model_id: str
    count: int
    dim: int


@attrs.frozen(kw_only=True)
class VectorStoreStats:
    """What ``stats()`` returns: one entry per model that has vectors, sorted by model_id."""

    models: tuple[ModelStats, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """``model_id -> count``."""
        return {model.model_id: model.count for model in self.models}

    @property
    def total(self) -> int:
        return sum(model.count for model in self.models)


def _sorted_ids(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(value))


@attrs.frozen(kw_only=True)
class LexicalDrift:
    """What ``lexical_check`` found wrong in a store's lexical index (or what
    ``lexical_repair`` fixed): the message ids of records with no lexical entry
    (``missing``) or with an entry that is not the terms of their text (``stale``), and the
    entries that belong to no record (``extra``; counted by a whole-store check only,
    since such an entry names no session). Ids are sorted."""

    missing: tuple[str, ...] = attrs.field(default=(), converter=_sorted_ids)
    stale: tuple[str, ...] = attrs.field(default=(), converter=_sorted_ids)
    extra: int = 0

    @property
    def count(self) -> int:
        """Everything that differs: missing, stale and extra entries."""
        return len(self.missing) + len(self.stale) + self.extra

    def __bool__(self) -> bool:
        return self.count > 0


__all__ = [
    "LexicalDrift",
    "ModelStats",
    "ScopeFilter",
    "VectorEntry",
    "VectorHit",
    "VectorKey",
    "VectorRecord",
    "VectorStoreStats",
]
