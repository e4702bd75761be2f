"""The JSON API through a real uvicorn server on loopback, with httpx."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import compression
from aalis_plugin_serve import ServeConfig
from aalis_plugin_serve._cli import plan_guard
from aalis_plugin_serve.testing import Served, host_config, running

from aalis_core._host import Host


def conversation(turns: int) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for index in range(turns):
        pairs.append(("user", f"Question {index}: my budget is {index * 100} euros."))
        pairs.append(("assistant", f"Answer {index}: noted."))
    return pairs


async def test_sessions_are_listed_newest_first_in_pages(served: Served) -> None:
    for index, sid in enumerate(["a", "b", "c"]):
        await served.save(sid, ("user", "hi"), start=1000 + index * 10)
    async with served.client() as client:
        first = (await client.get("/api/sessions", params={"limit": 2})).json()
        rest = (await client.get("/api/sessions", params={"limit": 2, "offset": 2})).json()
    assert first["total"] == 3
    assert [s["session_id"] for s in first["sessions"]] == ["c", "b"]
    assert [s["session_id"] for s in rest["sessions"]] == ["a"]
    assert first["sessions"][0] == {
        "session_id": "c",
        "active": 1,
        "archived": 0,
        "last_timestamp": 1020,
    }


async def test_timeline_shows_summarised_kept_and_divider_after_compress(served: Served) -> None:
    await served.save("trip", *conversation(8))
    async with served.writer() as client:
        response = await client.post("/api/sessions/trip/compress", json={})
        assert response.status_code == 200, response.text
        summary = response.json()["summary"]
        full = (await client.get("/api/sessions/trip/full")).json()
        history = (await client.get("/api/sessions/trip/history")).json()
    assert summary["text"]
    assert full["summary"] == summary
    states = [item["state"] for item in full["items"]]
    assert "summarised" in states
    assert states.count("divider") == 1
    assert full["total"] == 17
    active = [m["content"] for m in history["messages"] if m.get("kind") != "event-marker"]
    expected = [
        item["message"]["content"] for item in full["items"] if item["state"] in ("active", "kept")
    ]
    assert active == expected


async def test_summary_endpoint(served: Served) -> None:
    await served.save("s", *conversation(3))
    async with served.client() as client:
        assert (await client.get("/api/sessions/s/summary")).json()["summary"] is None
    await served.host.capability(compression).use.compress("s")
    async with served.client() as client:
        record = (await client.get("/api/sessions/s/summary")).json()["summary"]
    assert record["text"]
    assert record["covered_to"] is not None


async def test_unknown_session_and_bad_parameters_are_clear_errors(served: Served) -> None:
    await served.save("known", ("user", "hi"))
    async with served.client() as client:
        missing = await client.get("/api/sessions/nope/full")
        missing_history = await client.get("/api/sessions/nope/history")
        bad_limit = await client.get("/api/sessions", params={"limit": "-1"})
        huge_limit = await client.get("/api/sessions", params={"limit": "100000"})
        not_a_number = await client.get("/api/sessions/known/history", params={"limit": "x"})
        no_route = await client.get("/api/nothing")
    assert missing.status_code == 404
    assert "nope" in missing.json()["error"]
    assert missing_history.status_code == 404
    assert bad_limit.status_code == 400
    assert "limit" in bad_limit.json()["error"]
    assert huge_limit.status_code == 400
    assert not_a_number.status_code == 400
    assert no_route.status_code == 404
    assert "error" in no_route.json()


async def test_session_ids_with_slashes_and_unicode_round_trip(served: Served) -> None:
    sid = "team/42 ünï"
    await served.save(sid, ("user", "hello"))
    async with served.client() as client:
        response = await client.get(f"/api/sessions/{sid.replace('/', '%2F')}/history")
    assert response.status_code == 200, response.text
    assert response.json()["session_id"] == sid


async def test_clear_by_types_returns_the_rows(served: Served) -> None:
    await served.save("s", *conversation(4))
    await served.host.capability(compression).use.compress("s")
    async with served.writer() as client:
        types = (await client.get("/api/clear-types")).json()["types"]
        unknown = await client.post(
            "/api/sessions/s/clear", json={"types": ["nope"], "confirm": True}
        )
        only_summary = await client.post(
            "/api/sessions/s/clear", json={"types": ["summary"], "confirm": True}
        )
        history_left = (await client.get("/api/sessions/s/history")).json()["messages"]
        everything = await client.post(
            "/api/sessions/s/clear", json={"types": None, "confirm": True}
        )
        after = await client.get("/api/sessions/s/full")
    assert {"context", "summary"} <= {t["id"] for t in types}
    assert unknown.status_code == 400
    assert "context" in unknown.json()["known"]
    rows = only_summary.json()
    assert rows["history_cleared"] is False
    assert [(r["type"], r["success"]) for r in rows["rows"]] == [("summary", True)]
    assert history_left
    rows = everything.json()
    assert rows["history_cleared"] is True
    assert ("context", True) in [(r["type"], r["success"]) for r in rows["rows"]]
    assert after.status_code == 404


async def test_clear_rejects_malformed_types(served: Served) -> None:
    await served.save("s", ("user", "hi"))
    async with served.writer() as client:
        for body in ({"types": "context"}, {"types": [1]}, {"types": [""]}):
            response = await client.post("/api/sessions/s/clear", json=body)
            assert response.status_code == 400, body
        broken = await client.post(
            "/api/sessions/s/clear",
            content=b"{not json",
            headers={"content-type": "application/json"},
        )
        array = await client.post("/api/sessions/s/clear", json=["context"])
        history = (await client.get("/api/sessions/s/history")).json()["messages"]
    assert broken.status_code == 400
    assert "JSON" in broken.json()["error"]
    assert array.status_code == 400
    assert len(history) == 1  # nothing was cleared by any of them


async def test_writes_need_token_header_and_json(served: Served) -> None:
    await served.save("s", ("user", "hi"))
    async with served.client() as client:
        no_token = await client.post(
            "/api/sessions/s/clear", json={}, headers={"X-Aalis-Request": "1"}
        )
        wrong_token = await client.post(
            "/api/sessions/s/clear",
            json={},
            headers={"X-Aalis-Request": "1", "Authorization": "Bearer wrong-token-of-some-length"},
        )
        no_header = await client.post(
            "/api/sessions/s/clear", json={}, headers={"Authorization": f"Bearer {served.token}"}
        )
        form = await client.post(
            "/api/sessions/s/clear",
            data={"types": "context"},
            headers={"Authorization": f"Bearer {served.token}", "X-Aalis-Request": "1"},
        )
        get_clear = await client.get("/api/sessions/s/clear")
        history = (await client.get("/api/sessions/s/history")).json()["messages"]
    assert no_token.status_code == 401
    assert wrong_token.status_code == 401
    assert no_header.status_code == 403
    assert form.status_code == 415
    assert get_clear.status_code == 405
    assert len(history) == 1


async def test_oversize_bodies_are_refused_before_reading(tmp_path: Path) -> None:
    async with (
        Host(host_config(tmp_path, max_body_bytes=1024)) as host,
        running(host) as served,
    ):
        await served.save("s", ("user", "hi"))
        async with served.writer() as client:
            declared = await client.post(
                "/api/sessions/s/clear", json={"types": ["context"], "pad": "x" * 5000}
            )

            async def chunks():  # no Content-Length: the streamed size counts
                for _ in range(10):
                    yield b" " * 512

            streamed = await client.post(
                "/api/sessions/s/clear",
                content=chunks(),
                headers={"content-type": "application/json"},
            )
            history = (await client.get("/api/sessions/s/history")).json()["messages"]
    assert declared.status_code == 413
    assert streamed.status_code == 413
    assert len(history) == 1


async def test_a_configured_token_guards_reads_too(tmp_path: Path) -> None:
    async with (
        Host(host_config(tmp_path)) as host,
        running(host, configured_token=True) as served,
        served.client() as client,
    ):
        anonymous = await client.get("/api/sessions")
        with_header = await client.get(
            "/api/sessions", headers={"Authorization": f"Bearer {served.token}"}
        )
        login = await client.get("/", params={"token": served.token})
        cookie = login.cookies.get("aalis_token")
        with_cookie = await client.get("/api/sessions")
        bad_login = await client.get("/", params={"token": "not-the-token-at-all"})
    assert anonymous.status_code == 401
    assert with_header.status_code == 200
    assert login.status_code == 303
    assert cookie == served.token
    assert "httponly" in login.headers["set-cookie"].lower()
    assert "samesite=strict" in login.headers["set-cookie"].lower()
    assert with_cookie.status_code == 200
    assert bad_login.status_code == 401


async def test_loopback_server_refuses_foreign_host_names(served: Served) -> None:
    async with served.client() as client:
        rebound = await client.get("/api/sessions", headers={"Host": "evil.example:8765"})
        page = await client.get("/", headers={"Host": "evil.example"})
        local = await client.get("/api/sessions", headers={"Host": "localhost:1"})
    assert rebound.status_code == 421
    assert page.status_code == 421
    assert local.status_code == 200


def test_binding_beyond_loopback_needs_a_token() -> None:
    import click

    with pytest.raises(click.UsageError, match="needs a token"):
        plan_guard(ServeConfig(), "0.0.0.0")
    guard, generated = plan_guard(ServeConfig(token="a-configured-token-123"), "0.0.0.0")
    assert not generated
    assert guard.token_configured
    assert not guard.loopback
    guard, generated = plan_guard(ServeConfig(), "127.0.0.1")
    assert generated
    assert len(guard.token) >= 16
    assert not guard.token_configured


def test_config_never_echoes_the_token() -> None:
    with pytest.raises(ValueError, match="at least 16 characters") as info:
        ServeConfig(token="short-secret")
    assert "short-secret" not in str(info.value)
    assert "a-long-secret-value-123" not in repr(ServeConfig(token="a-long-secret-value-123"))


async def test_page_and_assets_are_served_with_a_strict_policy(served: Served) -> None:
    async with served.client() as client:
        page = await client.get("/")
        script = await client.get("/static/app.js")
        style = await client.get("/static/style.css")
    assert page.status_code == 200
    assert "<title>Aalis memory</title>" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert script.status_code == 200
    assert ".innerHTML" not in script.text
    assert style.status_code == 200


async def test_metadata_read_endpoints(served: Served) -> None:
    from aalis_api_memory import memory

    await served.host.capability(memory).use.save_metadata("notes", "k", {"v": 1})
    async with served.client() as client:
        namespaces = (await client.get("/api/metadata")).json()["namespaces"]
        entries = (await client.get("/api/metadata/notes")).json()["entries"]
    assert "notes" in namespaces
    assert [(e["key"], e["data"]) for e in entries] == [("k", {"v": 1})]
    json.dumps(entries)


async def test_undo_deletes_the_last_turn_and_tells_the_pages(served: Served) -> None:
    await served.save("s", *conversation(3))
    async with served.writer() as client:
        response = await client.post("/api/sessions/s/undo", json={"confirm": True})
        history = (await client.get("/api/sessions/s/history")).json()["messages"]
        empty = await client.post("/api/sessions/never/undo", json={"confirm": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["deleted"] == 2
    assert [m["content"] for m in body["messages"]] == [
        "Question 2: my budget is 200 euros.",
        "Answer 2: noted.",
    ]
    assert [m["content"] for m in history][-1] == "Answer 1: noted."
    assert empty.status_code == 409
    assert "nothing to undo" in empty.json()["error"]


async def test_recall_search_finds_an_indexed_message(served: Served) -> None:
    from aalis_api_memory import memory
    from aalis_schema_message import Message

    plugin: Any = served.host.plugin("memory-vector")
    saved = [
        Message(role="user", content="My sister Ingrid lives in Trondheim.", timestamp=1000),
        Message(role="assistant", content="Trondheim is lovely in June.", timestamp=1001),
        Message(role="user", content="I need a vegetarian menu for Friday.", timestamp=1002),
    ]
    service = served.host.capability(memory).use
    for message in saved:
        await service.save_message("s", message)
    await served.host.emit("memory_messages_saved", session_id="s", messages=saved)
    assert await plugin.indexer.settle(10.0)
    async with served.client() as client:
        found = await client.get("/api/recall", params={"session": "s", "q": "Ingrid Trondheim"})
        no_query = await client.get("/api/recall", params={"session": "s", "q": " "})
        big_k = await client.get("/api/recall", params={"session": "s", "q": "x", "k": "1000"})
    assert found.status_code == 200, found.text
    hits = found.json()["hits"]
    assert hits
    assert hits[0]["message"]["content"] == "My sister Ingrid lives in Trondheim."
    # why it came: the vectors, or (a store that also searches by words) both legs
    assert hits[0]["source"] in {"vector", "both"}
    assert no_query.status_code == 400
    assert big_k.status_code == 400


async def test_recall_without_a_provider_says_so(tmp_path: Path) -> None:
    config = host_config(tmp_path)
    config["plugins"]["disabled"].append("memory-vector")
    async with Host(config) as host, running(host) as served, served.client() as client:
        response = await client.get("/api/recall", params={"session": "s", "q": "hello"})
    assert response.status_code == 503
    assert "recall" in response.json()["error"]
