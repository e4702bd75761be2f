"""run_clear, history_cleared and clear_metadata_namespaces in a real host (SPEC §5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aalis_agent import clear_types, run_clear
from aalis_api_memory import (
    ClearRequest,
    ClearResult,
    Put,
    TextRef,
    UnknownClearType,
    clear_metadata_namespaces,
    history_cleared,
    memory,
    resolve_types,
)
from aalis_plugin_memory_inmemory import InMemoryMemory
from aalis_schema_message import Message

from aalis_core import Plugin


def said(content: str, ts: int | None = None) -> Message:
    return Message(role="user", content=content, timestamp=ts)


def rows(results: list[ClearResult]) -> list[tuple[str, bool, str, str | None]]:
    return [(r.source, r.success, str(r.message), r.type) for r in results]


async def seed(host: Any, *sessions: str) -> Any:
    mem = host.capability(memory).use
    for sid in sessions:
        for i in range(3):
            await mem.save_message(sid, said(f"{sid}-{i}", 1_000 + i))
    await mem.save_metadata("notes", "k", {"v": 1})
    return mem


# -- rows ---------------------------------------------------------------------------------


async def test_rows_are_typed_and_follow_the_onion(
    make_host: Any, make_participant: Any, listener: Any
) -> None:
    outer = make_participant("outer", "notes", "out")
    inner = make_participant("inner", "cache", "in")
    async with make_host(outer, inner, listener) as host:
        mem = await seed(host, "s", "other")
        results = await run_clear(host, "session", "s")
        assert rows(results) == [
            ("inner", True, "cache cleared", "cache"),
            ("memory", True, "conversation history cleared", "context"),
            ("outer", True, "notes cleared", "notes"),
        ]
        assert await mem.get_history("s") == []
        assert len(await mem.get_history("other")) == 3
        assert await mem.get_metadata("notes", "k") == {"v": 1}
        assert history_cleared(results)
        assert listener.changed == ["s"]
        [request] = outer.seen
        assert request.scope == "session"
        assert request.session_id == "s"
        assert request.types is None


async def test_types_limit_who_clears(make_host: Any, make_participant: Any, listener: Any) -> None:
    notes = make_participant("notes-plugin", "notes")
    cache = make_participant("cache-plugin", "cache")
    async with make_host(notes, cache, listener) as host:
        mem = await seed(host, "s")
        results = await run_clear(host, "session", "s", types=["notes"])
        assert rows(results) == [("notes-plugin", True, "notes cleared", "notes")]
        assert len(await mem.get_history("s")) == 3
        assert not history_cleared(results)
        assert listener.changed == []


@pytest.mark.parametrize("alias", ["history", "messages", "context"])
async def test_history_aliases(make_host: Any, alias: str, make_participant: Any) -> None:
    notes = make_participant("notes-plugin", "notes")
    async with make_host(notes) as host:
        mem = await seed(host, "s")
        results = await run_clear(host, "session", "s", types=[alias])
        assert rows(results) == [("memory", True, "conversation history cleared", "context")]
        assert await mem.get_history("s") == []


async def test_all_means_every_type(make_host: Any, make_participant: Any) -> None:
    notes = make_participant("notes-plugin", "notes")
    async with make_host(notes) as host:
        await seed(host, "s")
        results = await run_clear(host, "session", "s", types=["notes", "all"])
        assert [r.type for r in results] == ["context", "notes"]
        assert notes.seen[0].types is None


def test_resolve_types() -> None:
    assert resolve_types(None) is None
    assert resolve_types(["history", "summary", "messages", "context"]) == ["context", "summary"]
    assert resolve_types(("summary", "all")) is None
    assert resolve_types([]) == []
    with pytest.raises(TypeError):
        resolve_types("context")
    with pytest.raises(TypeError):
        resolve_types([1])  # type: ignore[list-item]


async def test_unknown_type_lists_the_known_ones_and_clears_nothing(
    make_host: Any, make_participant: Any
) -> None:
    notes = make_participant("notes-plugin", "notes")
    async with make_host(notes) as host:
        mem = await seed(host, "s")
        assert [t.id for t in clear_types(host)] == ["context", "notes"]
        with pytest.raises(UnknownClearType) as caught:
            await run_clear(host, "session", "s", types=["notes", "nope", "history"])
        assert caught.value.unknown == ["nope"]
        assert caught.value.known == ["context", "notes"]
        assert "nope" in str(caught.value)
        assert "context, notes" in str(caught.value)
        assert notes.seen == []
        assert len(await mem.get_history("s")) == 3


async def test_an_explicit_type_nobody_answers_gets_a_failure_row(
    make_host: Any, make_participant: Any
) -> None:
    silent = make_participant("silent", "ghost", "never")
    async with make_host(silent) as host:
        await seed(host, "s")
        results = await run_clear(host, "session", "s", types=["ghost", "context"])
        assert rows(results) == [
            ("memory", True, "conversation history cleared", "context"),
            ("aalis", False, "no enabled plugin handles ghost", "ghost"),
        ]
        assert isinstance(results[1].message, TextRef)
        # Without explicit types, a silent participant is not a failure.
        results = await run_clear(host, "session", "s")
        assert [r.source for r in results] == ["memory"]


@pytest.mark.parametrize("when", ["raise-in", "raise-out"])
async def test_a_raising_middleware_gets_a_row_and_history_is_still_cleared(
    make_host: Any, when: str, make_participant: Any
) -> None:
    broken = make_participant("broken", "broken-type", when)
    after = make_participant("after", "notes")
    async with make_host(broken, after) as host:
        mem = await seed(host, "s")
        results = await run_clear(host, "session", "s")
        failures = [r for r in results if not r.success]
        assert [(r.source, r.type) for r in failures] == [("broken", None)]
        assert "broke on the way" in str(failures[0].message)
        assert ("memory", True, "conversation history cleared", "context") in rows(results)
        assert ("after", True, "notes cleared", "notes") in rows(results)
        assert await mem.get_history("s") == []
        assert history_cleared(results)


async def test_a_short_circuit_leaves_the_history(
    make_host: Any, make_participant: Any, listener: Any
) -> None:
    stopper = make_participant("stopper", "stop-type", "stop")
    async with make_host(stopper, listener) as host:
        mem = await seed(host, "s")
        results = await run_clear(host, "session", "s")
        assert results == []
        assert not history_cleared(results)
        assert len(await mem.get_history("s")) == 3
        assert listener.changed == []
        results = await run_clear(host, "session", "s", types=["context"])
        assert rows(results) == [("aalis", False, "no enabled plugin handles context", "context")]


class FailingStore(InMemoryMemory):
    async def clear_session(self, session_id: str) -> None:
        raise OSError("disk on fire")


class FailingBackend(Plugin):
    name = "failing-backend"
    provides = (memory,)

    async def start(self, ctx: Any) -> None:
        ctx.provide(memory, FailingStore(), priority=50)


async def test_a_failing_backend_is_a_failed_context_row(make_host: Any) -> None:
    async with make_host(FailingBackend()) as host:
        results = await run_clear(host, "session", "s")
        assert [(r.source, r.success, r.type) for r in results] == [("memory", False, "context")]
        assert "disk on fire" in str(results[0].message)
        assert not history_cleared(results)


async def test_scope_all_clears_every_session_and_emits_per_session(
    make_host: Any, make_participant: Any, listener: Any
) -> None:
    notes = make_participant("notes-plugin", "notes")
    async with make_host(notes, listener) as host:
        mem = await seed(host, "a", "b", "c")
        results = await run_clear(host, "all")
        assert [(r.source, r.type) for r in results] == [
            ("memory", "context"),
            ("notes-plugin", "notes"),
        ]
        for sid in "abc":
            assert await mem.get_history(sid) == []
        assert await mem.get_metadata("notes", "k") == {"v": 1}
        assert sorted(listener.changed) == ["a", "b", "c"]
        assert notes.seen[0].scope == "all"
        assert notes.seen[0].session_id is None


async def test_without_a_memory_backend(tmp_path: Any, make_participant: Any) -> None:
    from aalis_core.testing import running_host

    notes = make_participant("notes-plugin", "notes")
    async with running_host(plugins=[notes], data_dir=tmp_path) as host:
        results = await run_clear(host, "session", "s")
        assert [(r.source, r.success, r.type) for r in results] == [
            ("memory", False, "context"),
            ("notes-plugin", True, "notes"),
        ]
        assert not history_cleared(results)
        with pytest.raises(UnknownClearType):
            await run_clear(host, "session", "s", types=["context"])


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("sessions", "s"), ValueError),
        (("session", None), TypeError),
        (("session", 1), TypeError),
        (("all", "s"), ValueError),
    ],
)
async def test_bad_scope_or_session(
    make_host: Any, args: tuple[Any, ...], error: type[Exception]
) -> None:
    async with make_host() as host:
        mem = await seed(host, "s")
        with pytest.raises(error):
            await run_clear(host, *args)
        with pytest.raises(TypeError):
            await run_clear(host, "session", "s", types="context")  # type: ignore[arg-type]
        assert len(await mem.get_history("s")) == 3


# -- holds --------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["session", "all"])
async def test_a_message_saved_during_the_clear_lands_after_it(
    make_host: Any, scope: str, make_participant: Any
) -> None:
    gate = make_participant("gate", "gate-type", "out")
    gate.gate = asyncio.Event()
    async with make_host(gate) as host:
        mem = await seed(host, "s")
        other_consumer = host.capability(memory, "some-agent").use
        clearing = asyncio.create_task(run_clear(host, scope, "s" if scope == "session" else None))
        await gate.entered.wait()
        saving = asyncio.create_task(
            other_consumer.save_message("s", said("said during the clear"))
        )
        elsewhere = asyncio.create_task(other_consumer.save_message("elsewhere", said("unrelated")))
        await asyncio.sleep(0.05)
        assert not saving.done()
        if scope == "session":
            await elsewhere  # another session is not held
        else:
            assert not elsewhere.done()
        gate.gate.set()
        results = await clearing
        await saving
        await elsewhere
        assert history_cleared(results)
        assert [m.content for m in await mem.get_history("s")] == ["said during the clear"]
        assert [m.content for m in await mem.get_history("elsewhere")] == ["unrelated"]


async def test_a_middleware_may_write_to_the_session_it_clears(make_host: Any) -> None:
    class Writer(Plugin):
        name = "writer"
        uses = {"memory": memory}

        async def start(self, ctx: Any) -> None:
            self.mem = ctx.caps.memory

        from aalis_core import hookimpl

        @hookimpl
        async def memory_clear(self, request: ClearRequest, call_next: Any) -> None:
            await call_next()
            await self.mem.use.save_message(request.session_id, said("cleared marker"))

    async with make_host(Writer()) as host:
        mem = await seed(host, "s")
        await asyncio.wait_for(run_clear(host, "session", "s"), timeout=5)
        assert [m.content for m in await mem.get_history("s")] == ["cleared marker"]


# -- history_cleared ----------------------------------------------------------------------


def _request(types: list[str] | None, *results: ClearResult) -> ClearRequest:
    return ClearRequest(scope="session", session_id="s", types=types, results=list(results))


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (_request(None, ClearResult("memory", True, "ok", "context")), True),
        (_request(["context"], ClearResult("memory", True, "ok", "context")), True),
        (_request(["summary"], ClearResult("memory", True, "ok", "context")), False),
        (_request(None), False),
        (_request(None, ClearResult("summary", True, "ok", "summary")), False),
        (
            _request(
                None,
                ClearResult("memory", True, "ok", "context"),
                ClearResult("x", False, "no", "context"),
            ),
            False,
        ),
        (
            _request(
                None, ClearResult("memory", True, "ok", "context"), ClearResult("x", False, "no")
            ),
            True,
        ),
    ],
    ids=[
        "all-ok",
        "explicit-ok",
        "not-requested",
        "no-rows",
        "no-context-row",
        "one-failed",
        "other-failure",
    ],
)
def test_history_cleared(request_: ClearRequest, expected: bool) -> None:
    assert history_cleared(request_) is expected
    if request_.types is None or "context" in request_.types:
        assert history_cleared(request_.results) is expected


# -- clear_metadata_namespaces ------------------------------------------------------------


class CountingStore(InMemoryMemory):
    """The real in-memory store, recording each commit_metadata batch."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[list[Any]] = []

    async def commit_metadata(self, ops: Any) -> None:
        self.commits.append(list(ops))
        await super().commit_metadata(ops)


class KeylessStore:
    """A store without list_metadata_keys (delegating to a real one)."""

    def __init__(self, inner: CountingStore) -> None:
        self.inner = inner

    async def list_metadata(self, namespace: str) -> Any:
        return await self.inner.list_metadata(namespace)

    async def commit_metadata(self, ops: Any) -> None:
        await self.inner.commit_metadata(ops)


class Recorder:
    def __init__(self) -> None:
        self.infos: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **fields: Any) -> None:
        self.infos.append((event, fields))


async def test_clear_metadata_namespaces_in_one_commit() -> None:
    store = CountingStore()
    await store.commit_metadata(
        [Put("b", k, {"v": k}) for k in ("z", "y")] + [Put("a", "x", {}), Put("keep", "k", {})]
    )
    store.put_raw_metadata("a", "broken", "{not json")
    store.commits.clear()
    log = Recorder()
    deleted = await clear_metadata_namespaces(store, ["b", "a", "empty"], log)
    assert deleted == [["y", "z"], ["broken", "x"], []]
    assert len(store.commits) == 1
    assert [(op.namespace, op.key) for op in store.commits[0]] == [
        ("b", "y"),
        ("b", "z"),
        ("a", "broken"),
        ("a", "x"),
    ]
    assert await store.list_metadata_keys("a") == []
    assert await store.list_metadata_keys("b") == []
    assert await store.get_metadata("keep", "k") == {}
    assert log.infos == [
        ("deleted unreadable metadata entries", {"entries": ["a/broken"], "count": 1, "more": 0})
    ]


async def test_clear_metadata_namespaces_names_the_first_ten_unreadable() -> None:
    store = CountingStore()
    for i in range(12):
        store.put_raw_metadata("ns", f"k{i:02}", "[]")
    log = Recorder()
    [deleted] = await clear_metadata_namespaces(store, ["ns"], log)
    assert len(deleted) == 12
    [(_, fields)] = log.infos
    assert fields["entries"] == [f"ns/k{i:02}" for i in range(10)]
    assert fields["more"] == 2


async def test_clear_metadata_namespaces_without_list_metadata_keys() -> None:
    store = CountingStore()
    await store.save_metadata("ns", "good", {"v": 1})
    store.put_raw_metadata("ns", "bad", "{")
    log = Recorder()
    assert await clear_metadata_namespaces(KeylessStore(store), ["ns"], log) == [["good"]]
    assert await store.list_metadata_keys("ns") == ["bad"]
    assert log.infos == []


async def test_clear_metadata_namespaces_with_nothing_to_delete_commits_nothing() -> None:
    store = CountingStore()
    assert await clear_metadata_namespaces(store, ["a", "b"], Recorder()) == [[], []]
    assert store.commits == []
    with pytest.raises(TypeError):
        await clear_metadata_namespaces(store, "ab", Recorder())
    with pytest.raises(TypeError):
        await clear_metadata_namespaces(store, [1], Recorder())


async def test_clear_metadata_namespaces_through_a_handle(make_host: Any) -> None:
    async with make_host() as host:
        mem = host.capability(memory).use
        await mem.save_metadata("summary", "s1", {"text": "x"})
        await mem.save_metadata("summary", "s2", {"text": "y"})
        assert await clear_metadata_namespaces(mem, ["summary"], Recorder()) == [["s1", "s2"]]
        assert await mem.list_metadata("summary") == []
