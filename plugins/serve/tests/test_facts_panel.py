"""The facts panel's API: what user-relation knows about a session's people, with history;
an edit supersedes, a retraction needs "confirm": true. A real server on loopback, the real
user-relation plugin deriving facts from saved messages."""

from __future__ import annotations

from typing import Any

from aalis_api_memory import memory
from aalis_plugin_serve.testing import Served
from aalis_schema_message import Message, new_message_id

ADA = {"platform": "cli", "user_id": "ada"}


async def _say(served: Served, session_id: str, text: str, ts: int) -> None:
    message = Message(id=new_message_id(), role="user", content=text, timestamp=ts, metadata=ADA)
    await served.host.capability(memory).use.save_message(session_id, message)
    await served.host.emit("memory_messages_saved", session_id=session_id, messages=[message])
    plugin: Any = served.host.plugin("user-relation")
    assert await plugin.active()[0].settle(5.0)


async def _facts(served: Served) -> list[dict[str, Any]]:
    async with served.client() as client:
        response = await client.get(
            "/api/sessions/s/facts", headers={"Authorization": f"Bearer {served.token}"}
        )
    assert response.status_code == 200, response.text
    (person,) = response.json()["persons"]
    assert person["person"] == "cli:ada"
    facts: list[dict[str, Any]] = person["facts"]
    return facts


async def test_the_panel_shows_history_and_edits_and_retracts(served: Served) -> None:
    await _say(served, "s", "I live in Paris.", 1000)
    await _say(served, "s", "I moved to Berlin.", 2000)
    paris, berlin = await _facts(served)
    assert (paris["value"], paris["current"], paris["superseded_by"]) == (
        "Paris",
        False,
        berlin["id"],
    )
    assert (berlin["value"], berlin["current"]) == ("Berlin", True)
    async with served.writer() as client:
        edited = await client.post(f"/api/facts/{berlin['id']}/edit", json={"value": "Munich"})
        blank = await client.post(f"/api/facts/{berlin['id']}/edit", json={"value": " "})
        missing = await client.post("/api/facts/nope/edit", json={"value": "x"})
    assert edited.status_code == 200, edited.text
    assert blank.status_code == 400
    assert missing.status_code == 404
    munich = edited.json()["fact"]
    assert (munich["value"], munich["extractor"]) == ("Munich", "user")
    values = [(f["value"], f["current"]) for f in await _facts(served)]
    assert values == [("Paris", False), ("Berlin", False), ("Munich", True)]

    async with served.writer() as client:
        unconfirmed = await client.post(f"/api/facts/{munich['id']}/retract", json={})
        assert unconfirmed.status_code == 400
        assert '"confirm": true' in unconfirmed.json()["error"]
        done = await client.post(f"/api/facts/{munich['id']}/retract", json={"confirm": True})
    assert done.status_code == 200, done.text
    values = [(f["value"], f["current"]) for f in await _facts(served)]
    assert values == [("Paris", False), ("Berlin", True)]


async def test_a_write_needs_the_token(served: Served) -> None:
    await _say(served, "s", "I live in Paris.", 1000)
    (paris,) = await _facts(served)
    async with served.client() as client:
        refused = await client.post(f"/api/facts/{paris['id']}/edit", json={"value": "Rome"})
    assert refused.status_code in (401, 403)
    assert [f["value"] for f in await _facts(served)] == ["Paris"]
