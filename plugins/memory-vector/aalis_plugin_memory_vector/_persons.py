"""Who speaks in each session, so recall knows which sessions are private to one person.

A person is ``(platform, user_id)``, read from ``metadata["platform"]`` and
``metadata["user_id"]`` of a session's *user* messages (both non-empty strings; a message
with only one of them names nobody). A session is **private** to a person when every
person-carrying message in it is that person; a session in which two people ever spoke is a
**group**, and stays one (the flag is sticky: replies in it may quote anyone who was there).

The registry keeps one metadata entry per session in memory-vector's namespace, so every
process on the store shares it and it moves with ``aalis export``/``migrate``. It is updated
when messages are announced (``memory_messages_saved``) and when recall looks at the session's
newest messages; an entry that is missing is rebuilt from the message store, the truth.
An entry that cannot be read counts as a group: never part of any shared scope.
See docs/host/privacy.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from aalis_api_memory import (
    Delete,
    FullHistory,
    MemoryService,
    Put,
    Transfer,
    clear_metadata_namespaces,
    supports,
)
from aalis_schema_message import Message

from aalis_plugin_memory_vector._text import metadata_str

if TYPE_CHECKING:
    from aalis_core import Handle

#: Metadata namespace of the registry: key = session id, data = ``People.to_json()``.
PERSONS_NAMESPACE = "memory-vector.persons"

Person = tuple[str, str]


def person_of(message: Message) -> Person | None:
    """The person who said ``message``: only user messages carry one."""
    if message.role != "user":
        return None
    platform = metadata_str(message, "platform")
    user_id = metadata_str(message, "user_id")
    if not platform or not user_id:
        return None
    return (platform, user_id)


@attrs.frozen
class People:
    """The people and platforms of one session."""

    persons: frozenset[Person] = frozenset()
    platforms: frozenset[str] = frozenset()
    #: More than one person has spoken here (ever), or the entry was unreadable.
    group: bool = False

    @property
    def private_to(self) -> Person | None:
        """The one person this session belongs to, or None (nobody, or a group)."""
        if self.group or len(self.persons) != 1:
            return None
        return next(iter(self.persons))

    @property
    def platform(self) -> str | None:
        """The one platform of this session (None when none or several)."""
        if self.group and not self.persons and not self.platforms:
            return None  # unreadable: in no shared scope
        return next(iter(self.platforms)) if len(self.platforms) == 1 else None

    def merged(self, messages: Iterable[Message]) -> People:
        persons = set(self.persons)
        platforms = set(self.platforms)
        for message in messages:
            person = person_of(message)
            if person is not None:
                persons.add(person)
            platform = metadata_str(message, "platform")
            if platform:
                platforms.add(platform)
        return People(frozenset(persons), frozenset(platforms), self.group or len(persons) > 1)

    def without(self, person: Person) -> People:
        """This session once ``person`` is forgotten (a group stays a group)."""
        return People(self.persons - {person}, self.platforms, self.group)

    def to_json(self) -> dict[str, Any]:
        return {
            "persons": sorted([list(p) for p in self.persons]),
            "platforms": sorted(self.platforms),
            "group": self.group,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> People:
        """The entry as stored; anything not shaped like one is a sealed group."""
        sealed = cls(group=True)
        if not isinstance(data, Mapping):
            return sealed
        raw_persons, raw_platforms = data.get("persons"), data.get("platforms")
        group = data.get("group")
        if not isinstance(raw_persons, list) or not isinstance(raw_platforms, list):
            return sealed
        if not isinstance(group, bool):
            return sealed
        persons: set[Person] = set()
        for item in raw_persons:
            if not (
                isinstance(item, list)
                and len(item) == 2
                and all(isinstance(part, str) and part for part in item)
            ):
                return sealed
            persons.add((item[0], item[1]))
        if not all(isinstance(p, str) and p for p in raw_platforms):
            return sealed
        return cls(frozenset(persons), frozenset(raw_platforms), group or len(persons) > 1)


class PersonRegistry:
    """The per-session people, in the memory store's metadata."""

    def __init__(self, memory: Handle[MemoryService], logger: Any) -> None:
        self._memory = memory
        self._logger = logger
        self._lock = asyncio.Lock()
        self._synced = False

    async def observe(self, session_id: str, messages: Iterable[Message]) -> People:
        """Merge the people of ``messages`` into the session's entry (rebuilt when missing)."""
        batch = list(messages)
        memory = self._memory.use
        async with self._lock:
            data = await memory.get_metadata(PERSONS_NAMESPACE, session_id)
            if data is None:
                return await self._rebuild(memory, session_id, batch)
            current = People.from_json(data)
            merged = current.merged(batch)
            if merged != current:
                await memory.save_metadata(PERSONS_NAMESPACE, session_id, merged.to_json())
            return merged

    async def rebuild(self, session_id: str) -> People:
        """The session's entry computed again from the message store."""
        async with self._lock:
            return await self._rebuild(self._memory.use, session_id, ())

    async def _rebuild(
        self, memory: MemoryService, session_id: str, extra: Iterable[Message]
    ) -> People:
        if supports(memory, FullHistory, "get_full_history"):
            history = await memory.get_full_history(session_id, float("inf"))
        else:
            history = await memory.get_history(session_id, float("inf"))
        people = People().merged([*history, *extra])
        await memory.save_metadata(PERSONS_NAMESPACE, session_id, people.to_json())
        return people

    async def everyone(self) -> dict[str, People]:
        """Every session's entry. The first call of a process adds the entries of sessions
        the registry has not seen (written before this version, or by a process without
        memory-vector): one full read of each such session, once."""
        memory = self._memory.use
        entries = {
            e.key: People.from_json(e.data) for e in await memory.list_metadata(PERSONS_NAMESPACE)
        }
        if not self._synced and supports(memory, Transfer, "list_sessions"):
            self._synced = True
            for info in await memory.list_sessions():
                if info.session_id not in entries:
                    entries[info.session_id] = await self.rebuild(info.session_id)
        return entries

    async def sessions_of(self, session_id: str, own: People, mode: str) -> frozenset[str]:
        """The sessions a recall from ``session_id`` reaches in ``user`` or ``platform`` mode;
        just the session itself whenever it has no one person (or one platform)."""
        itself = frozenset({session_id})
        if mode == "user":
            person = own.private_to
            if person is None:
                return itself
            found = {
                sid
                for sid, people in (await self.everyone()).items()
                if people.private_to == person
            }
            return itself | found
        if mode == "platform":
            platform = own.platform
            if platform is None:
                return itself
            found = {
                sid
                for sid, people in (await self.everyone()).items()
                if people.platform == platform
            }
            return itself | found
        return itself

    async def drop(self, session_id: str | None) -> int:
        """Remove the entry of a session whose history was cleared (every entry when None):
        who spoke there is personal data too, and nothing of it remains to be derived."""
        memory = self._memory.use
        async with self._lock:
            if session_id is None:
                (keys,) = await clear_metadata_namespaces(memory, [PERSONS_NAMESPACE], self._logger)
                self._synced = False
                return len(keys)
            await memory.delete_metadata(PERSONS_NAMESPACE, session_id)
            return 1

    async def forget(self, person: Person, erased_sessions: Iterable[str]) -> int:
        """Drop ``person`` from every entry and the entries of ``erased_sessions`` (cleared
        whole), in one batch; returns how many entries changed."""
        memory = self._memory.use
        gone = set(erased_sessions)
        async with self._lock:
            ops: list[Put | Delete] = []
            for entry in await memory.list_metadata(PERSONS_NAMESPACE):
                if entry.key in gone:
                    ops.append(Delete(PERSONS_NAMESPACE, entry.key))
                    continue
                people = People.from_json(entry.data)
                if person in people.persons:
                    ops.append(Put(PERSONS_NAMESPACE, entry.key, people.without(person).to_json()))
            for key in gone:
                if not any(isinstance(op, Delete) and op.key == key for op in ops):
                    ops.append(Delete(PERSONS_NAMESPACE, key))
            if ops:
                await memory.commit_metadata(ops)
            return len(ops)


__all__ = ["PERSONS_NAMESPACE", "People", "Person", "PersonRegistry", "person_of"]
