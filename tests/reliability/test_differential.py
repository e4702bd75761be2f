"""Sequences of ordinary calls behave on every backend exactly as on the reference backend.

The hostile-input fuzzing checks one call after one random call; this drives longer sequences
of valid calls — saves with colliding timestamps and event markers, archives with keep lists,
deletes by timestamp, rewrites, imports, clears — where ordering and archiving bugs hide (a
backend that ordered ties by arrival, or counted a marker, would drift from the reference after
a few steps). After every step the result and the whole stored state must equal
``memory-inmemory``'s, except for the ids the two stores give messages saved without one
(random, so compared as present: every stored message has one, all distinct).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from aalis_api_memory import (
    Delete,
    FullMemoryService,
    Put,
    RecentMessageRecord,
    RecentMessagesQuery,
    StoredMessage,
)
from aalis_schema_message import Message
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

pytestmark = pytest.mark.timeout(300)

SESSIONS = ["a", "b", "c"]
session = st.sampled_from(SESSIONS)
stamp = st.integers(1, 6).map(lambda t: t * 1000)  # few values: many ties
small = st.one_of(st.integers(0, 6), st.just(math.inf))


@st.composite
def a_message(draw: st.DrawFn) -> Message:
    marker = draw(st.integers(0, 4)) == 0
    return Message(
        role=draw(st.sampled_from(["user", "assistant", "tool", "system", "notice"])),
        content=draw(st.sampled_from(["hi", "hello there", "ok", "x%y", "", None])),
        kind="event-marker" if marker else draw(st.sampled_from([None, None, "note"])),
        timestamp=draw(stamp),
        metadata=draw(st.sampled_from([None, {"platform": "cli"}, {"platform": "web"}])),
    )


step = st.one_of(
    st.tuples(st.just("save_message"), st.tuples(session, a_message())),
    st.tuples(st.just("save_message"), st.tuples(session, a_message())),
    st.tuples(st.just("save_message"), st.tuples(session, a_message())),
    st.tuples(st.just("get_history"), st.tuples(session, small)),
    st.tuples(st.just("count_history"), st.tuples(session)),
    st.tuples(st.just("get_full_history"), st.tuples(session, small)),
    st.tuples(
        st.just("archive_span"), st.tuples(session, small, st.lists(st.integers(0, 5), max_size=3))
    ),
    st.tuples(st.just("clear_session"), st.tuples(session)),
    st.tuples(
        st.just("get_messages_by_session_range"),
        st.tuples(
            session,
            stamp,
            stamp,
            st.sampled_from([None, ["user"], ["user", "assistant"]]),
            st.sampled_from([None, ["event-marker"], ["note"]]),
        ),
    ),
    st.tuples(
        st.just("get_recent_messages_across_sessions"),
        st.builds(
            RecentMessagesQuery,
            limit=st.integers(0, 8),
            roles=st.sampled_from([None, (), ("tool",), ("user", "notice")]),
            kinds=st.sampled_from([None, ("note",), ("event-marker",)]),
            exclude_kinds=st.sampled_from([None, ("note",)]),
            since_ts=st.one_of(st.none(), stamp),
            platform=st.sampled_from([None, "cli", "web"]),
            exclude_session_ids=st.sampled_from([None, ("a",), ("b", "c")]),
        ).map(lambda q: (q,)),
    ),
    st.tuples(
        st.just("update_message_content"),
        st.tuples(session, st.sampled_from(["hi", "x%y", "l"]), st.sampled_from(["HI", ""]), small),
    ),
    st.tuples(
        st.just("delete_messages_by_timestamps"), st.tuples(session, st.lists(stamp, max_size=2))
    ),
    st.tuples(st.just("list_sessions"), st.just(())),
    st.tuples(st.just("export_session"), st.tuples(session)),
    st.tuples(
        st.just("import_messages"),
        st.tuples(
            session, st.lists(st.builds(StoredMessage, a_message(), st.booleans()), max_size=3)
        ),
    ),
    st.tuples(st.just("clear_all"), st.just(())),
    st.tuples(
        st.just("commit_metadata"),
        st.lists(
            st.one_of(
                st.builds(
                    Put,
                    st.sampled_from(["n1", "n2"]),
                    st.sampled_from(["k1", "k2"]),
                    st.fixed_dictionaries({"v": st.integers(0, 3)}),
                ),
                st.builds(Delete, st.sampled_from(["n1", "n2"]), st.sampled_from(["k1", "k2"])),
            ),
            max_size=3,
        ).map(lambda ops: (ops,)),
    ),
    st.tuples(st.just("list_namespaces"), st.just(())),
)


#: An id a store gave a message saved without one (``new_message_id``).
_GIVEN_ID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def _anon(value: Any) -> Any:
    """``value`` with every store-given message id replaced by ``"<given>"``."""
    if isinstance(value, Message):
        assert isinstance(value.id, str), f"a message was read without an id: {value!r}"
        return value.with_id("<given>") if _GIVEN_ID.fullmatch(value.id) else value
    if isinstance(value, StoredMessage):
        return StoredMessage(_anon(value.message), value.archived)
    if isinstance(value, RecentMessageRecord):
        return RecentMessageRecord(value.session_id, _anon(value.message))
    if isinstance(value, list):
        return [_anon(item) for item in value]
    return value


async def _state(mem: Any) -> Any:
    sessions = {}
    ids: list[str] = []
    for info in await mem.list_sessions():
        records = await mem.export_session(info.session_id)
        ids.extend(r.message.id for r in records)
        sessions[info.session_id] = [(_anon(r.message), r.archived) for r in records]
    assert len(set(ids)) == len(ids), "two stored messages share an id"
    metadata = {
        ns: {k: await mem.get_metadata(ns, k) for k in await mem.list_metadata_keys(ns)}
        for ns in await mem.list_namespaces()
    }
    return sessions, metadata


def _normal(method: str, value: Any) -> Any:
    value = _anon(value)
    if method == "list_sessions":
        return sorted(value, key=lambda i: i.session_id)
    if method == "get_recent_messages_across_sessions":
        return sorted((r.message.timestamp, r.session_id, repr(r.message)) for r in value)
    return value


async def _empty(mem: Any) -> None:
    await mem.clear_all()
    deletes = [
        Delete(ns, k)
        for ns in await mem.list_namespaces()
        for k in await mem.list_metadata_keys(ns)
    ]
    if deletes:
        await mem.commit_metadata(deletes)


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


async def _run(memory: FullMemoryService, steps: list[tuple[str, tuple[Any, ...]]]) -> None:
    from aalis_plugin_memory_inmemory import InMemoryMemory

    reference = InMemoryMemory()
    await _empty(memory)
    for number, (method, args) in enumerate(steps):
        got = await getattr(memory, method)(*args)
        want = await getattr(reference, method)(*args)
        where = f"step {number} {method}{args!r}"
        assert _normal(method, got) == _normal(method, want), f"{where} returned another result"
        assert await _state(memory) == await _state(reference), f"{where} left another state"


@pytest.mark.parametrize("backend_name", ["memory-sqlite"])
@_settings(40)
@given(steps=st.lists(step, min_size=4, max_size=12))
async def test_call_sequences_match_the_reference(
    memory: FullMemoryService, steps: list[tuple[str, tuple[Any, ...]]]
) -> None:
    await _run(memory, steps)


@pytest.mark.parametrize("backend_name", ["memory-mongodb"])
@_settings(10)
@given(steps=st.lists(step, min_size=4, max_size=10))
async def test_call_sequences_on_mongodb_match_the_reference(
    memory: FullMemoryService, steps: list[tuple[str, tuple[Any, ...]]]
) -> None:
    await _run(memory, steps)


@pytest.mark.parametrize("backend_name", ["memory-postgres"])
@_settings(20)
@given(steps=st.lists(step, min_size=4, max_size=12))
async def test_call_sequences_on_postgres_match_the_reference(
    memory: FullMemoryService, steps: list[tuple[str, tuple[Any, ...]]]
) -> None:
    await _run(memory, steps)
