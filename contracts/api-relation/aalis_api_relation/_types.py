"""The value types of the fact layer: who a fact is about, and the fact itself.

A fact is one thing a person said about themselves ("I live in Lyon"), kept with the ids of
the messages it came from (``sources``) so it can be shown, checked, and removed when those
messages go. A fact is never overwritten: a newer value of the same attribute *supersedes*
it (``superseded_at``, ``superseded_by``), so the history of what was true stays visible.
See docs/host/facts.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

#: Attributes a person has one value of at a time: a new value supersedes the old one.
SINGLE_VALUED: frozenset[str] = frozenset(
    {
        "name",
        "city",
        "employer",
        "job",
        "diet",
        "birthday",
        "email",
        "phone",
        "partner",
    }
)
#: Attributes a person may have several values of (two pets, three allergies); a new value
#: is added beside the others, and only a correction or a contrary statement supersedes.
MULTI_VALUED: frozenset[str] = frozenset(
    {"family", "pet", "allergy", "health", "likes", "dislikes", "plan", "date"}
)
ATTRIBUTES: frozenset[str] = SINGLE_VALUED | MULTI_VALUED


def is_single_valued(attribute: str) -> bool:
    """True when a new value of ``attribute`` replaces the current one. Unknown attributes
    (a model's extractor may invent one) are single-valued: a stale value is worse than a
    missing one."""
    return attribute not in MULTI_VALUED


def _name(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ValueError(
            f"a person's {attribute.name} must be a non-empty string without surrounding "
            f"whitespace, got {value!r}"
        )
    if attribute.name == "platform" and ":" in value:
        raise ValueError(f"a person's platform must not contain ':', got {value!r}")


@attrs.frozen(order=True)
class PersonRef:
    """Who a fact is about: a user id on one platform. Any object with ``platform`` and
    ``user_id`` (the memory contract's ``Person``) converts through ``PersonRef.of``."""

    platform: str = attrs.field(validator=_name)
    user_id: str = attrs.field(validator=_name)

    @classmethod
    def of(cls, value: object) -> PersonRef:
        if isinstance(value, PersonRef):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        platform = getattr(value, "platform", None)
        user_id = getattr(value, "user_id", None)
        if not isinstance(platform, str) or not isinstance(user_id, str):
            raise ValueError(f"a person needs a platform and a user_id, got {value!r}")
        return cls(platform, user_id)

    @classmethod
    def parse(cls, text: str) -> PersonRef:
        """``"PLATFORM:USER_ID"`` as a ``PersonRef`` (the user id may contain ``:``)."""
        if not isinstance(text, str) or ":" not in text:
            raise ValueError(f"a person is written PLATFORM:USER_ID, got {text!r}")
        platform, user_id = text.split(":", 1)
        return cls(platform, user_id)

    def __str__(self) -> str:
        return f"{self.platform}:{self.user_id}"


def _text(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a fact's {attribute.name} must be a non-empty string, got {value!r}")


def _ms(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None and attribute.name != "valid_from":
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"a fact's {attribute.name} must be epoch milliseconds, got {value!r}")


def _ids(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)):
        raise TypeError("a list of ids is expected, not a single string")
    items = tuple(dict.fromkeys(value))
    for item in items:
        if not isinstance(item, str) or not item:
            raise ValueError(f"ids must be non-empty strings, got {item!r}")
    return items


def _confidence(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"a fact's confidence must be between 0 and 1, got {value!r}")


@attrs.frozen(kw_only=True)
class Fact:
    """One fact about one person.

    ``value`` is the normalised value ("Lyon"), ``text`` the sentence it was read from.
    ``sources`` are message ids (several when the person said it more than once);
    ``valid_from`` is when it was first said and ``superseded_at`` when a newer value
    replaced it (epoch ms; None while it is current). ``extractor`` says what produced it
    (``offline``, ``llm``, ``user`` for an edit) and ``sessions`` where it was said.
    """

    id: str = attrs.field(validator=_text)
    person: PersonRef = attrs.field(validator=attrs.validators.instance_of(PersonRef))
    attribute: str = attrs.field(validator=_text)
    value: str = attrs.field(validator=_text)
    text: str = attrs.field(validator=_text)
    valid_from: int = attrs.field(validator=_ms)
    superseded_at: int | None = attrs.field(default=None, validator=_ms)
    superseded_by: str | None = attrs.field(default=None)
    sources: tuple[str, ...] = attrs.field(default=(), converter=_ids)
    confidence: float = attrs.field(default=1.0, validator=_confidence)
    extractor: str = attrs.field(default="offline", validator=_text)
    sessions: tuple[str, ...] = attrs.field(default=(), converter=_ids)

    @property
    def current(self) -> bool:
        return self.superseded_at is None

    def to_json(self) -> dict[str, Any]:
        """The fact as JSON data (what a store keeps; ``person`` as ``PLATFORM:USER_ID``)."""
        return {
            "id": self.id,
            "person": str(self.person),
            "attribute": self.attribute,
            "value": self.value,
            "text": self.text,
            "valid_from": self.valid_from,
            "superseded_at": self.superseded_at,
            "superseded_by": self.superseded_by,
            "sources": list(self.sources),
            "confidence": self.confidence,
            "extractor": self.extractor,
            "sessions": list(self.sessions),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fact:
        """The fact ``to_json`` wrote; ``ValueError``/``TypeError`` on anything else."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a fact is a JSON object, got {type(data).__name__}")
        return cls(
            id=data["id"],
            person=PersonRef.parse(data["person"]),
            attribute=data["attribute"],
            value=data["value"],
            text=data["text"],
            valid_from=data["valid_from"],
            superseded_at=data.get("superseded_at"),
            superseded_by=data.get("superseded_by"),
            sources=data.get("sources", ()),
            confidence=data.get("confidence", 1.0),
            extractor=data.get("extractor", "offline"),
            sessions=data.get("sessions", ()),
        )

    def line(self) -> str:
        """``attribute: value`` as the prompt block and the CLI show it."""
        return f"{self.attribute}: {self.value}"


__all__ = [
    "ATTRIBUTES",
    "MULTI_VALUED",
    "SINGLE_VALUED",
    "Fact",
    "PersonRef",
    "is_single_valued",
]
