"""Fan-out of ``history_changed`` to the pages subscribed over the event stream.

Each subscriber has a bounded queue, so a client that stops reading costs a fixed amount of
memory: when its queue is full, the pending events are replaced by one ``resync`` event that
tells the page to fetch everything again (an event is a notification, never the data, so
nothing is lost by collapsing them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs


@attrs.frozen
class Event:
    name: str
    session_id: str | None


RESYNC = Event("resync", None)


class Subscription:
    def __init__(self, session_id: str | None, size: int) -> None:
        self.session_id = session_id
        self.queue: asyncio.Queue[Event] = asyncio.Queue(size)

    def offer(self, event: Event) -> None:
        if self.session_id is not None and event.session_id not in (None, self.session_id):
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(RESYNC)


class EventBroker:
    """Subscribers in, events out; publishing never waits for a client."""

    def __init__(self, client_queue: int = 256) -> None:
        self._client_queue = client_queue
        self._subscribers: set[Subscription] = set()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def publish(self, name: str, session_id: str | None) -> None:
        event = Event(name, session_id)
        for subscription in list(self._subscribers):
            subscription.offer(event)

    @asynccontextmanager
    async def subscribe(self, session_id: str | None = None) -> AsyncIterator[Subscription]:
        subscription = Subscription(session_id, self._client_queue)
        self._subscribers.add(subscription)
        try:
            yield subscription
        finally:
            self._subscribers.discard(subscription)


__all__ = ["RESYNC", "Event", "EventBroker", "Subscription"]
