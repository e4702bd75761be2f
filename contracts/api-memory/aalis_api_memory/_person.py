"""Who said it: a person is ``(platform, user_id)``, stamped on the messages they write.

Privacy rules need to know whose words a message holds: recall in ``user`` mode reaches
only the sessions of the same person, and forgetting a person has to find every message
they wrote. Both read the person from ``metadata["platform"]`` and ``metadata["user_id"]``
of user messages, so whoever saves a user message (the chat, ``run_turn``, an adapter)
stamps it from what the caller knows about the speaker. See docs/reference/turn.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import attrs
from aalis_schema_message import Message

#: The metadata keys a person is read from and stamped onto.
PLATFORM_KEY = "platform"
USER_ID_KEY = "user_id"


def _name(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a person's {attribute.name} must be a non-empty string, got {value!r}")
    if value != value.strip():
        raise ValueError(
            f"a person's {attribute.name} must not start or end with whitespace, got {value!r}"
        )


def _platform(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _name(inst, attribute, value)
    if ":" in str(value):
        # ``PLATFORM:USER_ID`` is how a person is written on the command line.
        raise ValueError(f"a person's platform must not contain ':', got {value!r}")


@runtime_checkable
class PersonLike(Protocol):
    """Anything with a ``platform`` and a ``user_id`` (``Person``, a fact layer's
    ``PersonRef``) names a person."""

    @property
    def platform(self) -> str: ...

    @property
    def user_id(self) -> str: ...


@attrs.frozen
class Person:
    """One person: a user id on one platform (``Person("cli", "alice")``)."""

    platform: str = attrs.field(validator=_platform)
    user_id: str = attrs.field(validator=_name)

    @classmethod
    def of(cls, value: PersonLike) -> Person:
        """``value`` as a checked ``Person`` (a clear ``ValueError`` when it is not one)."""
        if isinstance(value, Person):
            return value
        platform = getattr(value, "platform", None)
        user_id = getattr(value, "user_id", None)
        if platform is None or user_id is None:
            raise ValueError(f"a person needs a platform and a user_id, got {type(value).__name__}")
        return cls(platform, user_id)

    @classmethod
    def parse(cls, text: str) -> Person:
        """``"PLATFORM:USER_ID"`` (the user id may contain ``:``) as a ``Person``."""
        if not isinstance(text, str) or ":" not in text:
            raise ValueError(f"a person is written PLATFORM:USER_ID, got {text!r}")
        platform, user_id = text.split(":", 1)
        if not platform.strip() or not user_id.strip():
            raise ValueError(
                f"a person is written PLATFORM:USER_ID (e.g. telegram:42), got {text!r}"
            )
        return cls(platform, user_id)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> Person | None:
        """The person a message's metadata names, or None when it names none (or a
        malformed one: an unknown speaker is nobody's, never somebody else's)."""
        if not metadata:
            return None
        platform, user_id = metadata.get(PLATFORM_KEY), metadata.get(USER_ID_KEY)
        if not isinstance(platform, str) or not isinstance(user_id, str):
            return None
        try:
            return cls(platform, user_id)
        except ValueError:
            return None

    def stamp(self, message: Message, *, overwrite: bool = True) -> Message:
        """``message`` with this person's platform and user id in its metadata.

        ``overwrite`` False keeps a platform or user id the message already carries (a
        message that came back from the store keeps its speaker)."""
        metadata: dict[str, Any] = dict(message.metadata or {})
        if overwrite:
            metadata[PLATFORM_KEY] = self.platform
            metadata[USER_ID_KEY] = self.user_id
        else:
            metadata.setdefault(PLATFORM_KEY, self.platform)
            metadata.setdefault(USER_ID_KEY, self.user_id)
        return attrs.evolve(message, metadata=metadata)

    def said(self, message: Message) -> bool:
        """True when ``message`` carries this person's platform and user id (any role: a
        reply an agent stamped with the person it answered is theirs too)."""
        metadata = message.metadata or {}
        return (
            metadata.get(PLATFORM_KEY) == self.platform
            and metadata.get(USER_ID_KEY) == self.user_id
        )

    def __str__(self) -> str:
        return f"{self.platform}:{self.user_id}"


def person_of(message: Message) -> Person | None:
    """Who wrote ``message``: the person its metadata names, or None."""
    return Person.from_metadata(message.metadata)


__all__ = ["PLATFORM_KEY", "USER_ID_KEY", "Person", "PersonLike", "person_of"]
