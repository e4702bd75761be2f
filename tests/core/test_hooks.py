"""Hook order, the middleware onion, contributions and events (SPEC §2.3)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from aalis_core import Plugin, hookimpl
from aalis_core.testing import capture_logs


@attrs.frozen
class Kind:
    id: Any
    label: str


def mw_plugin(name: str, log: list[str], mode: str = "wrap", **opts: Any) -> Plugin:
    """A middleware plugin; mode: wrap | short | raise-before | raise-after | twice."""

    class P(Plugin):
        @hookimpl(**opts)
        async def thing_clear(self, request: Any, call_next: Any) -> None:
            log.append(f"{name} in")
            if mode == "short":
                return
            if mode == "raise-before":
                raise RuntimeError(f"{name} broke")
            await call_next()
            if mode == "twice":
                await call_next()
            if mode == "raise-after":
                raise RuntimeError(f"{name} broke late")
            log.append(f"{name} out")

    P.name = name  # type: ignore[misc]
    return P()


async def run(host: Any, log: list[str]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []

    async def default() -> None:
        log.append("default")

    await host.run_middleware(
        "thing_clear", {"req": 1}, default, lambda name, exc: errors.append((name, str(exc)))
    )
    return errors


async def test_onion_order(make_host: Any) -> None:
    log: list[str] = []
    async with make_host(mw_plugin("a", log), mw_plugin("b", log)) as host:
        assert await run(host, log) == []
    assert log == ["a in", "b in", "default", "b out", "a out"]


async def test_tryfirst_trylast_then_start_order(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        mw_plugin("last", log, trylast=True),
        mw_plugin("plain1", log),
        mw_plugin("first", log, tryfirst=True),
        mw_plugin("plain2", log),
    )
    async with host:
        assert [n for n, _ in host.hook_impls("thing_clear")] == [
            "first",
            "plain1",
            "plain2",
            "last",
        ]


async def test_short_circuit(make_host: Any) -> None:
    log: list[str] = []
    async with make_host(
        mw_plugin("a", log), mw_plugin("s", log, "short"), mw_plugin("c", log)
    ) as host:
        assert await run(host, log) == []
    assert log == ["a in", "s in", "a out"]


async def test_raise_before_call_next_continues_on_its_behalf(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(mw_plugin("a", log), mw_plugin("x", log, "raise-before"), mw_plugin("c", log))
    async with host:
        errors = await run(host, log)
    assert errors == [("x", "x broke")]
    assert log == ["a in", "x in", "c in", "default", "c out", "a out"]


async def test_raise_after_call_next_unwinds(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(mw_plugin("a", log), mw_plugin("x", log, "raise-after"), mw_plugin("c", log))
    async with host:
        errors = await run(host, log)
    assert errors == [("x", "x broke late")]
    assert log == ["a in", "x in", "c in", "default", "c out", "a out"]


async def test_call_next_twice_is_an_error(make_host: Any) -> None:
    log: list[str] = []
    async with make_host(mw_plugin("t", log, "twice")) as host:
        errors = await run(host, log)
    assert log == ["t in", "default"]  # the chain below ran once
    assert errors[0][0] == "t"
    assert "twice" in errors[0][1]


async def test_default_error_reraised_after_unwinding(make_host: Any) -> None:
    log: list[str] = []
    async with make_host(mw_plugin("a", log)) as host:

        def default() -> None:
            raise OSError("database gone")

        with pytest.raises(OSError, match="database gone"):
            await host.run_middleware("thing_clear", None, default, lambda n, e: None)
    assert log == ["a in", "a out"]


async def test_middleware_of_inactive_plugins_is_skipped(make_host: Any) -> None:
    log: list[str] = []

    class Broken(Plugin):
        name = "broken"

        async def start(self, ctx: Any) -> None:
            raise RuntimeError("nope")

        @hookimpl
        async def thing_clear(self, request: Any, call_next: Any) -> None:
            log.append("broken in")
            await call_next()

    async with make_host(Broken(), mw_plugin("a", log)) as host:
        await run(host, log)
    assert log == ["a in", "default", "a out"]


async def test_unknown_hook_is_value_error(make_host: Any) -> None:
    async with make_host() as host:
        with pytest.raises(ValueError, match="no_such_event"):
            await host.emit("no_such_event", session_id="s")
        with pytest.raises(ValueError, match="no_such_hook"):
            host.hook_impls("no_such_hook")
        with pytest.raises(ValueError, match="no_such_hook"):
            host.collect_contributions("no_such_hook")
        with pytest.raises(ValueError, match="not a middleware"):
            await host.run_middleware("thing_changed", None, lambda: None, lambda n, e: None)


def event_plugin(name: str, log: list[str], fail: bool = False, is_async: bool = True) -> Plugin:
    class P(Plugin):
        if is_async:

            @hookimpl
            async def thing_changed(self, session_id: str) -> None:
                log.append(f"{name} {session_id}")
                if fail:
                    raise RuntimeError(f"{name} handler broke")
        else:

            @hookimpl
            def thing_changed(self, session_id: str) -> None:
                log.append(f"{name} {session_id}")
                if fail:
                    raise RuntimeError(f"{name} handler broke")

        @hookimpl
        def note_added(self, text: str) -> None:  # impls may take a subset of the payload
            log.append(f"{name} note {text}")

    P.name = name  # type: ignore[misc]
    return P()


async def test_emit_calls_sync_and_async_in_order_and_isolates_errors(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        event_plugin("a", log),
        event_plugin("bad", log, fail=True),
        event_plugin("c", log, is_async=False),
    )
    async with host:
        with capture_logs() as logs:
            await host.emit("thing_changed", session_id="s1")
        await host.emit("note_added", session_id="s1", text="hi")
    assert log == ["a s1", "bad s1", "c s1", "a note hi", "bad note hi", "c note hi"]
    failures = [line for line in logs.lines if line["event"] == "event handler failed"]
    assert len(failures) == 1
    assert failures[0]["plugin"] == "bad"
    assert failures[0]["hook"] == "thing_changed"
    assert "bad handler broke" in failures[0]["error"]


async def test_emit_payload_must_match_spec(make_host: Any) -> None:
    async with make_host() as host:
        with pytest.raises(TypeError, match="missing session_id"):
            await host.emit("thing_changed")
        with pytest.raises(TypeError, match="unexpected bogus"):
            await host.emit("thing_changed", session_id="s", bogus=1)


async def test_ctx_emit_reaches_other_plugins(make_host: Any) -> None:
    log: list[str] = []

    class Emitter(Plugin):
        name = "emitter"

        async def start(self, ctx: Any) -> None:
            self.ctx = ctx

    emitter = Emitter()
    async with make_host(emitter, event_plugin("listener", log)):
        await emitter.ctx.emit("thing_changed", session_id="x")
    assert log == ["listener x"]


def contributor(name: str, items: Any, **opts: Any) -> Plugin:
    class P(Plugin):
        @hookimpl(**opts)
        def thing_types(self) -> Any:
            if isinstance(items, Exception):
                raise items
            return items

    P.name = name  # type: ignore[misc]
    return P()


async def test_contributions_order_validation_and_first_label_wins(make_host: Any) -> None:
    host = make_host(
        contributor("a", [Kind("context", "History (a)"), Kind("notes", "Notes")]),
        contributor(
            "b",
            [
                Kind("context", "History (b)"),
                Kind("", "empty"),
                Kind("x/y", "slash"),
                Kind(3, "not a str"),
                Kind("b-own", "B"),
            ],
        ),
        contributor("boom", RuntimeError("contribution failed")),
        contributor("first", [Kind("early", "Early")], tryfirst=True),
        contributor("none", None),
    )
    async with host:
        with capture_logs() as logs:
            collected = host.collect_contributions("thing_types")
    assert [(n, k.id, k.label) for n, k in collected] == [
        ("first", "early", "Early"),
        ("a", "context", "History (a)"),
        ("a", "notes", "Notes"),
        ("b", "b-own", "B"),
    ]
    dropped = [line for line in logs.lines if line["event"] == "invalid contribution dropped"]
    assert [line["plugin"] for line in dropped] == ["b", "b", "b"]
    assert any(line["plugin"] == "boom" for line in logs.lines)


async def test_async_contribution_is_rejected(make_host: Any) -> None:
    class AsyncContrib(Plugin):
        name = "async-contrib"

        @hookimpl
        async def thing_types(self) -> Any:
            return [Kind("x", "X")]

    async with make_host(AsyncContrib()) as host:
        assert host.collect_contributions("thing_types") == []
