"""What a plugin's context gives it: the run-time services of the host, not its lifecycle."""

from __future__ import annotations

import inspect
from typing import Any

from aalis_core import Capability, Host, HostServices, Plugin
from aalis_core._hook_runner import HookRunner

SERVICES = {
    "capability",
    "emit",
    "emit_each",
    "hook_impls",
    "run_middleware",
    "collect_contributions",
}


def test_host_services_name_the_run_time_operations_and_no_lifecycle() -> None:
    declared = {n for n, _ in inspect.getmembers(HostServices) if not n.startswith("_")}
    assert declared == SERVICES
    assert not declared & {"start", "stop", "stop_plugin", "plugins", "plugin", "config"}


def test_the_host_implements_every_service_with_the_same_signature() -> None:
    for name in SERVICES:
        ours = inspect.signature(getattr(HostServices, name))
        hosts = inspect.signature(getattr(Host, name))
        runners = inspect.signature(getattr(HookRunner, name))
        assert list(ours.parameters) == list(hosts.parameters), name
        assert list(ours.parameters) == list(runners.parameters), name


async def test_the_hook_services_of_the_host_are_its_runners(make_host: Any) -> None:
    """One implementation, one door: ``host.emit`` is ``host.hooks.emit``, not a copy."""
    host: Host = make_host()
    for name in SERVICES - {"capability"}:
        mine, runners = getattr(host, name), getattr(host.hooks, name)
        assert mine == runners, name  # the same function bound to the same runner
        assert mine.__self__ is host.hooks, name
        assert getattr(Host, name).__doc__ == getattr(HookRunner, name).__doc__, name


async def test_provide_goes_to_the_host_in_the_plugins_own_name(make_host: Any) -> None:
    """``ctx.provide`` reaches the host through the function the host bound to this plugin."""

    class Thing:
        value = 7

    thing: Capability[Thing] = Capability("thing", Thing)

    class Provider(Plugin):
        name = "provider"
        provides = (thing,)

        async def start(self, ctx: Any) -> None:
            ctx.provide(thing, Thing(), priority=3)

    host: Host = make_host(Provider())
    async with host:
        assert host.providers(thing) == ["provider"]
        assert host.capability(thing).use.value == 7


async def test_ctx_host_offers_the_services_and_no_lifecycle_at_run_time(make_host: Any) -> None:
    """Without a type checker too, a plugin cannot stop another plugin or the host."""
    seen: dict[str, Any] = {}

    class Probe(Plugin):
        name = "probe"

        async def start(self, ctx: Any) -> None:
            seen["host"] = ctx.host

    host: Host = make_host(Probe())
    async with host:
        view = seen["host"]
        assert view is host.hooks  # it is this host's hook runner ...
        for name in ("stop_plugin", "start", "stop", "plugins", "plugin", "_provide", "config"):
            assert not hasattr(view, name), name  # ... with nothing of its lifecycle
        public = {name for name in dir(view) if not name.startswith("_")}
        assert public == SERVICES
        # the services reach this host: a capability nobody provides is absent through both
        nothing: Capability[object] = Capability("nothing", object)
        assert view.capability(nothing, "probe").present is host.capability(nothing).present
        assert view.capability(nothing, "probe").present is False
