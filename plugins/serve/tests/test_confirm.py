"""Clear, undo and forget through the JSON API: each names what it removes and goes only
with ``"confirm": true``. A real uvicorn server on loopback, with httpx."""

from __future__ import annotations

import math
from typing import Any

from aalis_api_memory import memory
from aalis_plugin_serve.testing import Served
from aalis_schema_message import Message


async def _say(served: Served, session_id: str, role: str, text: str, ts: int, **meta: Any) -> None:
    await served.host.capability(memory).use.save_message(
        session_id, Message(role=role, content=text, timestamp=ts, metadata=meta or None)
    )


async def _history(served: Served, session_id: str) -> list[str]:
    stored = await served.host.capability(memory).use.get_history(session_id, math.inf)
    return [m.content or "" for m in stored]


async def test_a_clear_without_confirmation_changes_nothing(served: Served) -> None:
    await served.save("s", ("user", "keep me"))
    async with served.writer() as client:
        bare = await client.post("/api/sessions/s/clear", json={"types": ["context"]})
        false = await client.post(
            "/api/sessions/s/clear", json={"types": ["context"], "confirm": False}
        )
        truthy = await client.post("/api/sessions/s/clear", json={"types": None, "confirm": 1})
        assert await _history(served, "s") == ["keep me"]
        done = await client.post(
            "/api/sessions/s/clear", json={"types": ["context"], "confirm": True}
        )
    for refused in (bare, false, truthy):
        assert refused.status_code == 400, refused.text
        assert '"confirm": true' in refused.json()["error"]
    assert done.status_code == 200, done.text
    assert await _history(served, "s") == []


async def test_undo_names_the_turn_and_deletes_only_what_was_confirmed(served: Served) -> None:
    await served.save("s", ("user", "one"), ("assistant", "reply one"), start=1000)
    await served.save("s", ("user", "two"), ("assistant", "reply two"), start=2000)
    async with served.writer() as client:
        preview = await client.get("/api/sessions/s/undo")
        shown = [m["timestamp"] for m in preview.json()["messages"]]
        bare = await client.post("/api/sessions/s/undo", json={})
        assert await _history(served, "s") == ["one", "reply one", "two", "reply two"]
        # Another process answers meanwhile: the turn the user saw is no longer the last.
        await served.save("s", ("user", "three"), start=3000)
        stale = await client.post("/api/sessions/s/undo", json={"confirm": True, "expect": shown})
        assert await _history(served, "s") == ["one", "reply one", "two", "reply two", "three"]
        again = (await client.get("/api/sessions/s/undo")).json()["messages"]
        done = await client.post(
            "/api/sessions/s/undo",
            json={"confirm": True, "expect": [m["timestamp"] for m in again]},
        )
        bad_expect = await client.post(
            "/api/sessions/s/undo", json={"confirm": True, "expect": "all"}
        )
        empty = await client.get("/api/sessions/never/undo")
    assert preview.status_code == 200, preview.text
    assert [m["content"] for m in preview.json()["messages"]] == ["two", "reply two"]
    assert bare.status_code == 400
    assert '"confirm": true' in bare.json()["error"]
    assert stale.status_code == 409
    assert "changed" in stale.json()["error"]
    assert [m["content"] for m in again] == ["three"]
    assert done.status_code == 200, done.text
    assert [m["content"] for m in done.json()["messages"]] == ["three"]
    assert bad_expect.status_code == 400
    assert empty.status_code == 200
    assert empty.json()["messages"] == []
    assert await _history(served, "s") == ["one", "reply one", "two", "reply two"]


async def test_the_persons_of_a_session_are_listed(served: Served) -> None:
    await _say(served, "group", "user", "hi", 1, platform="discord", user_id="alice")
    await _say(served, "group", "assistant", "hello", 2, platform="discord")
    await _say(served, "group", "user", "hey", 3, platform="discord", user_id="bob")
    await _say(served, "group", "user", "me again", 4, platform="discord", user_id="alice")
    await _say(served, "anon", "user", "who am I", 5)
    async with served.client() as client:
        group = await client.get("/api/sessions/group/persons")
        anon = await client.get("/api/sessions/anon/persons")
    assert group.status_code == 200, group.text
    assert group.json()["persons"] == [
        {"person": "discord:alice", "platform": "discord", "user_id": "alice", "messages": 2},
        {"person": "discord:bob", "platform": "discord", "user_id": "bob", "messages": 1},
    ]
    assert anon.json()["persons"] == []


async def test_forget_asks_then_forgets_the_person_through_every_layer(served: Served) -> None:
    await _say(served, "alice-dm", "user", "secret", 1, platform="cli", user_id="alice")
    await _say(served, "bob-dm", "user", "bob's", 2, platform="cli", user_id="bob")
    async with served.writer() as client, served.client() as stranger:
        unconfirmed = await client.post("/api/forget", json={"person": "cli:alice"})
        malformed = [
            await client.post("/api/forget", json={"person": bad, "confirm": True})
            for bad in ("alice", {"platform": "cli"}, 7, {"platform": "cli", "user_id": ""})
        ]
        anonymous = await stranger.post(
            "/api/forget",
            json={"person": "cli:alice", "confirm": True},
            headers={"X-Aalis-Request": "1"},
        )
        assert await _history(served, "alice-dm") == ["secret"]
        done = await client.post(
            "/api/forget",
            json={"person": {"platform": "cli", "user_id": "alice"}, "confirm": True},
        )
    assert unconfirmed.status_code == 400
    assert all(r.status_code == 400 for r in malformed), [r.text for r in malformed]
    assert anonymous.status_code in (401, 403)  # a write, guarded like the others
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["person"] == "cli:alice"
    assert body["forgotten"] is True
    [memory_row] = [row for row in body["rows"] if row["source"] == "memory"]
    assert memory_row["success"] is True
    assert sum(memory_row["counts"].values()) >= 1
    assert await _history(served, "alice-dm") == []
    assert await _history(served, "bob-dm") == ["bob's"]
