"""Forgetting a person: the ``memory_forget`` chain's request, result rows and helpers.

``forget_person`` (in ``aalis_agent``) runs the chain. Modelled on clearing (``run_clear``): one request passes through an onion of middleware (one
per plugin that keeps something derived from what people said: vectors, summaries, notes,
facts), with the erasure from the memory store as the innermost action. Each participant
reports one ``ForgetResult`` row with counts, so ``aalis forget`` can show a line per layer
and exit 1 when one of them failed. What is removed, and what a model may still repeat, is
in docs/host/privacy.md.

The innermost action finds the person through the ``Transfer`` group (``list_sessions`` +
``export_session``): every session is read once, archived messages included. That is a full
scan of the store, paid once per forget, and every session is held against new messages
while it runs (a message saved meanwhile waits and lands afterwards).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from aalis_schema_message import Message

from aalis_api_memory._clearing import Text
from aalis_api_memory._person import Person
from aalis_api_memory._service import MemoryService
from aalis_api_memory._types import Delete
from aalis_api_memory._validation import check_namespace

#: The key a plugin sets in a metadata entry's data to mark the entry as one person's
#: (value: ``"PLATFORM:USER_ID"``); ``forget_marked_entries`` deletes such entries.
PERSON_MARK = "person"


def speaker(message: Message) -> tuple[str, str] | None:
    """The person a *user* message carries, as ``(platform, user_id)``; None for anyone else."""
    if message.role != "user":
        return None
    metadata = message.metadata or {}
    platform, user_id = metadata.get("platform"), metadata.get("user_id")
    if isinstance(platform, str) and platform and isinstance(user_id, str) and user_id:
        return (platform, user_id)
    return None


def _counts(value: Mapping[str, int] | None) -> dict[str, int]:
    counts = dict(value or {})
    for key, count in counts.items():
        if not isinstance(key, str) or isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"counts are str -> int, got {key!r}: {count!r}")
    return counts


@attrs.frozen
class ForgetResult:
    """One layer's report: what it removed (``counts``) and whether it removed all of it."""

    source: str = attrs.field(validator=attrs.validators.instance_of(str))
    success: bool = attrs.field(validator=attrs.validators.instance_of(bool))
    message: Text = attrs.field()
    counts: dict[str, int] = attrs.field(factory=dict, converter=_counts)


@attrs.define(kw_only=True)
class ForgetRequest:
    """What every ``memory_forget`` middleware receives.

    The innermost action fills ``private_sessions`` (cleared whole: every person-carrying
    message in them was this person's) and ``group_messages`` (per group session, the
    person's messages it deleted) before the middleware's code after ``call_next`` runs.
    """

    person: Person = attrs.field(validator=attrs.validators.instance_of(Person))
    results: list[ForgetResult] = attrs.field(factory=list)
    private_sessions: list[str] = attrs.field(factory=list)
    group_messages: dict[str, list[Message]] = attrs.field(factory=dict)

    @property
    def affected_sessions(self) -> list[str]:
        return [*self.private_sessions, *self.group_messages]

    def report(
        self,
        source: str,
        success: bool,
        message: Text,
        counts: Mapping[str, int] | None = None,
    ) -> None:
        """Append a row; shorthand for ``results.append(ForgetResult(...))``."""
        self.results.append(ForgetResult(source, success, message, _counts(counts)))


def marked_as(data: object, person: Person) -> bool:
    """True when a metadata entry's data is marked as ``person``'s (``PERSON_MARK``)."""
    return isinstance(data, Mapping) and data.get(PERSON_MARK) == str(person)


async def forget_marked_entries(
    memory: MemoryService, namespaces: Sequence[str], person: Person
) -> int:
    """Delete the entries of ``namespaces`` marked as ``person``'s, in ONE
    ``commit_metadata``; returns how many. For plugins that keep one entry per person's
    item and mark it with ``{PERSON_MARK: "PLATFORM:USER_ID"}``."""
    if isinstance(namespaces, (str, bytes)):
        raise TypeError("namespaces must be a list of str, not a single string")
    ops: list[Delete] = []
    for namespace in [check_namespace(n) for n in namespaces]:
        for entry in await memory.list_metadata(namespace):
            if marked_as(entry.data, person):
                ops.append(Delete(namespace, entry.key))
    if ops:
        await memory.commit_metadata(ops)
    return len(ops)


__all__ = [
    "PERSON_MARK",
    "ForgetRequest",
    "ForgetResult",
    "forget_marked_entries",
    "marked_as",
    "speaker",
]
