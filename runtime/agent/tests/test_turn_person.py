"""run_turn stamps the caller's person on the user message it saves (memory-inmemory)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from aalis_agent import SyncHost, TurnSettings, run_turn
from aalis_api_memory import Person, memory, person_of
from aalis_schema_message import Message

from aalis_core.testing import running_host

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")


@attrs.frozen
class Result:
    content: str
    usage: None = None


class EchoModel:
    id = "echo"
    context_window = 4096

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Result:
        return Result(content=f"echo: {messages[-1].content}")


@attrs.frozen
class PersonRef:
    """Another layer's person type (the fact layer has one): only the two fields count."""

    platform: str
    user_id: str


async def test_the_user_message_carries_the_callers_person(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        turn = await run_turn(
            host, store, EchoModel(), "s", "hello", person=Person("discord", "alice#1")
        )
        await run_turn(host, store, EchoModel(), "s", "again", person=PersonRef("discord", "bob"))
        stored = await store.get_history("s", math.inf)
    assert stored[0].metadata == {"platform": "discord", "user_id": "alice#1"}
    assert turn.user == stored[0]
    assert person_of(stored[0]) == Person("discord", "alice#1")
    assert person_of(stored[2]) == Person("discord", "bob")
    # The reply is the assistant's words, not the person's: platform only, no user id.
    assert stored[1].metadata == {"platform": "discord", "model": "echo"}
    assert person_of(stored[1]) is None


async def test_without_a_person_nothing_is_invented(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        await run_turn(host, store, EchoModel(), "s", "hi", settings=TurnSettings(platform="web"))
        (user, _) = await store.get_history("s", math.inf)
    assert user.metadata == {"platform": "web"}
    assert person_of(user) is None


async def test_a_bad_person_is_refused_before_anything_is_saved(tmp_path: Path) -> None:
    async with running_host([inmemory.MemoryInmemory()], data_dir=tmp_path) as host:
        store = host.capability(memory).use
        with pytest.raises(ValueError, match="user_id must be a non-empty string"):
            await run_turn(host, store, EchoModel(), "s", "hi", person=PersonRef("cli", ""))
        with pytest.raises(ValueError, match="platform and a user_id"):
            await run_turn(host, store, EchoModel(), "s", "hi", person="cli:alice")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="differs from the settings' platform"):
            await run_turn(
                host,
                store,
                EchoModel(),
                "s",
                "hi",
                settings=TurnSettings(platform="web"),
                person=Person("cli", "alice"),
            )
        assert await store.get_history("s", math.inf) == []


def test_sync_host_turn_passes_the_person_through(tmp_path: Path) -> None:
    with SyncHost(
        {"host": {"data_dir": str(tmp_path)}}, [inmemory.MemoryInmemory()], discover=False
    ) as aalis:
        aalis.turn("nb", "from a notebook", model=EchoModel(), person=Person("jupyter", "carol"))
        user, reply = aalis.history("nb")
    assert user.metadata == {"platform": "jupyter", "user_id": "carol"}
    assert reply.metadata == {"platform": "jupyter", "model": "echo"}


def test_a_person_is_checked_and_written_platform_colon_user() -> None:
    assert Person.parse("telegram:12:34") == Person("telegram", "12:34")
    assert str(Person("cli", "alice")) == "cli:alice"
    for bad in ("alice", ":alice", "cli:", " cli:alice"):
        with pytest.raises(ValueError, match=r"PLATFORM:USER_ID|non-empty|whitespace"):
            Person.parse(bad)
    with pytest.raises(ValueError, match="platform must not contain ':'"):
        Person("a:b", "c")
    # Metadata that names no person, or a malformed one, is nobody's.
    assert Person.from_metadata({"platform": "cli"}) is None
    assert Person.from_metadata({"platform": "cli", "user_id": 7}) is None
    assert Person.from_metadata(None) is None
    message = Message(role="user", content="x", metadata={"user_id": "kept"})
    assert Person("cli", "new").stamp(message, overwrite=False).metadata == {
        "user_id": "kept",
        "platform": "cli",
    }
