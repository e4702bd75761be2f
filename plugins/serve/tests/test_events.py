"""The event stream: every subscribed client sees every ``history_changed``, and memory stays
flat however many clients come and go or stop reading."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from collections.abc import AsyncIterator

import httpx
from aalis_api_memory import memory
from aalis_plugin_serve._broker import RESYNC, EventBroker
from aalis_plugin_serve.testing import Served
from aalis_schema_message import Message


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, object]]]:
    name = "message"
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            yield name, json.loads(line.split(":", 1)[1])
            name = "message"


async def watch(
    client: httpx.AsyncClient, ready: asyncio.Event, expected: int, path: str = "/api/events"
) -> list[str]:
    seen: list[str] = []
    async with client.stream("GET", path) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for name, data in sse_events(response):
            if name == "ready":
                ready.set()
            elif name == "history_changed":
                seen.append(str(data["session_id"]))
                if len(seen) == expected:
                    return seen
    return seen


async def test_a_clear_reaches_a_subscribed_client(served: Served) -> None:
    await served.save("s", ("user", "hi"))
    ready = asyncio.Event()
    async with served.client() as client, served.writer() as writer:
        watcher = asyncio.create_task(watch(client, ready, 1))
        await asyncio.wait_for(ready.wait(), 10)
        response = await writer.post(
            "/api/sessions/s/clear", json={"types": ["context"], "confirm": True}
        )
        assert response.status_code == 200
        assert await asyncio.wait_for(watcher, 10) == ["s"]


async def test_a_session_filter_only_passes_that_session(served: Served) -> None:
    ready = asyncio.Event()
    async with served.client() as client:
        watcher = asyncio.create_task(watch(client, ready, 1, "/api/events?session=mine"))
        await asyncio.wait_for(ready.wait(), 10)
        await served.host.emit("history_changed", session_id="other")
        await served.host.emit("history_changed", session_id="mine")
        assert await asyncio.wait_for(watcher, 10) == ["mine"]


async def fan_out_round(served: Served, clients: int, events: int, round_no: int) -> None:
    service = served.host.capability(memory).use
    readies = [asyncio.Event() for _ in range(clients)]
    limits = httpx.Limits(max_connections=clients + 5)
    async with served.client(limits=limits) as client:
        watchers = [asyncio.create_task(watch(client, ready, events)) for ready in readies]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)
        for index in range(events):
            # Messages are saved while the events go out, as in a live bot.
            await service.save_message(
                f"live-{round_no}", Message(role="user", content=f"m{index}", timestamp=index + 1)
            )
            await served.host.emit("history_changed", session_id=f"s{index}")
        results = await asyncio.wait_for(asyncio.gather(*watchers), 60)
    expected = [f"s{index}" for index in range(events)]
    assert all(seen == expected for seen in results), [len(s) for s in results]
    for _ in range(100):  # the server notices closed streams on its next send or ping
        if served.state.broker.subscribers == 0:
            break
        await served.host.emit("history_changed", session_id="poke")
        await asyncio.sleep(0.05)
    assert served.state.broker.subscribers == 0


async def test_fifty_clients_see_every_event_and_memory_stays_flat(served: Served) -> None:
    await fan_out_round(served, 50, 20, 0)  # warm-up: imports, caches, connection pools
    gc.collect()
    tracemalloc.start()
    try:
        await fan_out_round(served, 50, 20, 1)
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        for round_no in range(2, 5):
            await fan_out_round(served, 50, 20, round_no)
        gc.collect()
        last, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Three more rounds of 50 clients leave no more than a little behind (no per-client or
    # per-event residue: a few tens of KiB per client, x150 clients, would be far above this).
    assert last - first < 2 * 1024 * 1024, (first, last)


async def test_a_client_that_stops_reading_costs_a_bounded_queue() -> None:
    broker = EventBroker(client_queue=4)
    async with broker.subscribe() as stalled, broker.subscribe("x") as filtered:
        for index in range(1000):
            broker.publish("history_changed", f"s{index}")
        assert stalled.queue.qsize() <= 4
        events = [stalled.queue.get_nowait() for _ in range(stalled.queue.qsize())]
        assert RESYNC in events  # told to fetch everything again, not silently behind
        assert filtered.queue.empty()
    assert broker.subscribers == 0
