"""Plugin lifecycle (SPEC §2.1): start order, pending, failures isolated, stop order."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from aalis_core import Capability, Plugin, PluginDisabled, hookimpl

alpha = Capability("alpha", object)
beta = Capability("beta", object)


def make_plugin(
    name: str,
    log: list[str],
    *,
    provides: tuple[Capability[Any], ...] = (),
    uses: dict[str, Capability[Any]] | None = None,
    requires: dict[str, Capability[Any]] | None = None,
    fail_start: BaseException | None = None,
    fail_stop: BaseException | None = None,
) -> Plugin:
    class P(Plugin):
        async def start(self, ctx: Any) -> None:
            log.append(f"start {name}")
            self.ctx = ctx
            for cap in self.provides:
                ctx.provide(cap, object())
            if fail_start is not None:
                raise fail_start

        async def stop(self) -> None:
            log.append(f"stop {name}")
            if fail_stop is not None:
                raise fail_stop

    P.name = name  # type: ignore[misc]
    P.provides = provides  # type: ignore[misc]
    P.uses = uses or {}  # type: ignore[misc]
    P.requires = requires or {}  # type: ignore[misc]
    return P()


def states(host: Any) -> dict[str, str]:
    return {p.name: p.state for p in host.plugins()}


async def test_providers_start_before_consumers_and_stop_in_reverse(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("c", log, requires={"b": beta}),
        make_plugin("b", log, provides=(beta,), uses={"a": alpha}),
        make_plugin("a", log, provides=(alpha,)),
        make_plugin("free", log),
    )
    async with host:
        assert log == ["start a", "start b", "start c", "start free"]
        assert set(states(host).values()) == {"active"}
        log.clear()
    assert log == ["stop free", "stop c", "stop b", "stop a"]
    assert set(states(host).values()) == {"stopped"}


async def test_ties_keep_load_order(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(*(make_plugin(n, log) for n in ["one", "two", "three"]))
    async with host:
        assert log == ["start one", "start two", "start three"]


async def test_uses_cycle_does_not_deadlock(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("x", log, provides=(alpha,), uses={"beta": beta}),
        make_plugin("y", log, provides=(beta,), uses={"alpha": alpha}),
    )
    async with host:
        assert states(host) == {"x": "active", "y": "active"}


async def test_missing_requirement_stays_pending(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(make_plugin("needy", log, requires={"alpha": alpha}), make_plugin("ok", log))
    async with host:
        info = {p.name: p for p in host.plugins()}
        assert info["needy"].state == "pending"
        assert "alpha" in (info["needy"].error or "")
        assert info["ok"].state == "active"
        assert "start needy" not in log
    assert "stop needy" not in log  # never started, never stopped
    assert states(host)["needy"] == "pending"


async def test_requires_deadlock_leaves_both_pending(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("needy", log, requires={"alpha": alpha}, provides=(beta,)),
        make_plugin("late", log, provides=(alpha,), requires={"b": beta}),
    )
    async with host:
        assert states(host) == {"needy": "pending", "late": "pending"}
        assert log == []


async def test_pending_plugin_starts_when_provider_comes_up(make_host: Any) -> None:
    log: list[str] = []
    # needy and late require each other's capability (a cycle); "other" also provides
    # beta. The cycle is broken in load order: needy is tried first and waits (pending),
    # late starts on other's beta and provides alpha, and needy is retried and starts.
    host = make_host(
        make_plugin("needy", log, requires={"alpha": alpha}, provides=(beta,)),
        make_plugin("late", log, provides=(alpha,), requires={"b": beta}),
        make_plugin("other", log, provides=(beta,)),
    )
    async with host:
        assert states(host) == {"needy": "active", "late": "active", "other": "active"}
        assert log == ["start other", "start late", "start needy"]
        assert {p.name: p.error for p in host.plugins()}["needy"] is None
    assert log[3:] == ["stop needy", "stop late", "stop other"]


async def test_requirement_pinned_to_failed_provider_stays_pending(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("good", log, provides=(alpha,)),
        make_plugin("bad", log, provides=(alpha,), fail_start=RuntimeError("boom")),
        make_plugin("needy", log, requires={"alpha": alpha}),
        config={"consumers": {"needy": {"alpha": "bad"}}},
    )
    async with host:
        info = {p.name: p for p in host.plugins()}
        assert info["needy"].state == "pending"
        assert "pinned to bad" in (info["needy"].error or "")


async def test_start_failure_is_isolated_and_stop_still_runs(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("bad", log, provides=(alpha,), fail_start=RuntimeError("disk on fire")),
        make_plugin("ok", log),
    )
    async with host:
        info = {p.name: p for p in host.plugins()}
        assert info["bad"].state == "error"
        assert info["bad"].error == "start failed: RuntimeError: disk on fire"
        assert info["ok"].state == "active"
        assert "stop bad" in log  # stop ran right after the half-finished start
        assert not host.capability(alpha).present  # what it provided is withdrawn
    assert log.count("stop bad") == 1


async def test_plugin_disabled_from_start(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(make_plugin("mongo", log, fail_start=PluginDisabled("no uri configured")))
    async with host:
        info = host.plugins()[0]
        assert (info.state, info.error) == ("disabled", "no uri configured")


async def test_stop_failure_marks_error_and_others_still_stop(make_host: Any) -> None:
    log: list[str] = []
    host = make_host(
        make_plugin("first", log),
        make_plugin("flaky", log, fail_stop=OSError("close failed")),
    )
    async with host:
        pass
    assert log[-2:] == ["stop flaky", "stop first"]
    info = {p.name: p for p in host.plugins()}
    assert info["flaky"].state == "error"
    assert "close failed" in (info["flaky"].error or "")
    assert info["first"].state == "stopped"


async def test_undeclared_hook_is_a_load_error_naming_plugin_and_hook(make_host: Any) -> None:
    class Typo(Plugin):
        name = "typo"

        @hookimpl
        def thing_chagned(self, session_id: str) -> None:  # misspelt
            pass

    class Fine(Plugin):
        name = "fine"

        @hookimpl
        def thing_changed(self, session_id: str) -> None:
            pass

    host = make_host(Typo(), Fine())
    info = {p.name: p for p in host.plugins()}
    assert info["typo"].state == "error"
    assert "'typo'" in (info["typo"].error or "")
    assert "'thing_chagned'" in (info["typo"].error or "")
    async with host:
        assert states(host) == {"typo": "error", "fine": "active"}
        assert [n for n, _ in host.hook_impls("thing_changed")] == ["fine"]


async def test_optionalhook_is_allowed(make_host: Any) -> None:
    class Optional(Plugin):
        name = "optional"

        @hookimpl(optionalhook=True)
        def some_future_hook(self) -> None:
            pass

    async with make_host(Optional()) as host:
        assert states(host) == {"optional": "active"}


async def test_hookimpl_with_unknown_argument_is_a_load_error(make_host: Any) -> None:
    class BadArgs(Plugin):
        name = "bad-args"

        @hookimpl
        def thing_changed(self, session_id: str, extra: int) -> None:
            pass

    host = make_host(BadArgs())
    info = host.plugins()[0]
    assert info.state == "error"
    assert "thing_changed" in (info.error or "")


async def test_plugin_info_fields(make_host: Any) -> None:
    log: list[str] = []

    class Versioned(Plugin):
        name = "versioned"
        version = "9.9"
        provides = (alpha,)
        uses: ClassVar = {"b": beta}

        async def start(self, ctx: Any) -> None:
            ctx.provide(alpha, object())

    host = make_host(Versioned(), make_plugin("beta-prov", log, provides=(beta,)))
    async with host:
        info = host.plugins()[0]
        assert info.to_json() == {
            "name": "versioned",
            "version": "9.9",
            "state": "active",
            "error": None,
            "provides": ["alpha"],
            "bindings": {"beta": "beta-prov"},
        }


async def test_context_fields(make_host: Any, tmp_path: Any) -> None:
    seen: dict[str, Any] = {}

    class Probe(Plugin):
        name = "probe"

        async def start(self, ctx: Any) -> None:
            seen.update(name=ctx.name, data_dir=ctx.data_dir, host=ctx.host, config=ctx.config)
            ctx.logger.info("hello")

    host = make_host(Probe())
    async with host:
        assert seen == {
            "name": "probe",
            "data_dir": tmp_path / "data",
            "host": host.hooks,
            "config": None,
        }
        assert host.data_dir == tmp_path / "data"
        assert not host.data_dir.exists()  # created by plugins that need it, not the host


async def test_host_cannot_start_twice(make_host: Any) -> None:
    host = make_host()
    async with host:
        with pytest.raises(RuntimeError):
            await host.start()
    await host.stop()  # idempotent


async def test_explicit_instance_names_must_be_unique(make_host: Any) -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="two plugin instances"):
        make_host(make_plugin("same", log), make_plugin("same", log))
    with pytest.raises(TypeError):
        make_host(object())
