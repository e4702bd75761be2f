"""No silent loss of durability: a volatile provider never stands in for a broken durable one.

See docs/host/providers.md ("No silent loss of durability").
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from aalis_core import Capability, CapabilityAbsent, Plugin, PluginDisabled

store = Capability("store", object)


class Backend:
    def __init__(self, label: str) -> None:
        self.label = label

    async def read(self) -> str:
        return self.label


def provider(
    name: str,
    priority: int = 0,
    *,
    volatile: bool = False,
    fail: str | None = None,
    disable: bool = False,
) -> Plugin:
    class P(Plugin):
        provides = (store,)

        async def start(self, ctx: Any) -> None:
            if disable:
                raise PluginDisabled("not configured")
            if fail is not None:
                raise OSError(fail)
            ctx.provide(store, Backend(name), priority=priority)

    P.name = name  # type: ignore[misc]
    P.volatile = volatile  # type: ignore[misc]
    return P()


class Consumer(Plugin):
    name = "consumer"
    uses: ClassVar = {"store": store}

    async def start(self, ctx: Any) -> None:
        self.ctx = ctx


async def test_failed_durable_provider_makes_unpinned_handle_absent(make_host: Any) -> None:
    consumer = Consumer()
    host = make_host(
        provider("ram", -100, volatile=True),
        provider("disk", 10, fail="file is not a database"),
        consumer,
    )
    async with host:
        handle = host.capability(store)
        assert not handle.present
        assert not consumer.ctx.caps.store.present
        with pytest.raises(CapabilityAbsent) as caught:
            _ = handle.use
        text = str(caught.value)
        assert "disk" in text
        assert "file is not a database" in text
        assert "ram" in text  # says the volatile one is not used instead
        assert host.providers(store) == ["ram"]  # it is active, just not bound
        bindings = {info.name: info.bindings for info in host.plugins()}
        assert bindings["consumer"] == {"store": None}
        assert host.consumer_bindings("cli") == {"store": None}


async def test_volatile_provider_serves_when_it_is_the_only_one(make_host: Any) -> None:
    host = make_host(provider("ram", -100, volatile=True))
    async with host:
        assert await host.capability(store).use.read() == "ram"


async def test_disabled_durable_provider_does_not_block(make_host: Any) -> None:
    host = make_host(provider("ram", -100, volatile=True), provider("disk", 10, disable=True))
    async with host:
        assert host.capability(store).provider == "ram"


async def test_disabled_in_config_does_not_block(make_host: Any) -> None:
    host = make_host(
        provider("ram", -100, volatile=True),
        provider("disk", 10),
        config={"plugins": {"disabled": ["disk"]}},
    )
    async with host:
        assert host.capability(store).provider == "ram"


async def test_pinning_the_volatile_provider_still_selects_it(make_host: Any) -> None:
    host = make_host(
        provider("ram", -100, volatile=True),
        provider("disk", 10, fail="read-only file system"),
        config={"capabilities": {"store": {"provider": "ram"}}},
    )
    async with host:
        assert host.capability(store).provider == "ram"
    host = make_host(
        provider("ram", -100, volatile=True),
        provider("disk", 10, fail="read-only file system"),
        config={"consumers": {"host": {"store": "ram"}}},
    )
    async with host:
        assert host.capability(store).provider == "ram"


async def test_volatile_never_wins_over_a_durable_one_even_with_higher_priority(
    make_host: Any,
) -> None:
    host = make_host(provider("ram", 100, volatile=True), provider("disk", 1))
    async with host:
        assert host.capability(store).provider == "disk"


async def test_stopping_the_durable_provider_does_not_move_handles_to_ram(make_host: Any) -> None:
    host = make_host(provider("ram", -100, volatile=True), provider("disk", 10))
    async with host:
        handle = host.capability(store)
        assert handle.provider == "disk"
        await host.stop_plugin("disk")
        assert not handle.present
        with pytest.raises(CapabilityAbsent, match="disk stopped; the volatile ram is not used"):
            _ = handle.use


async def test_two_durable_one_failed_the_other_serves(make_host: Any) -> None:
    host = make_host(
        provider("ram", -100, volatile=True),
        provider("disk", 10, fail="disk full"),
        provider("net", 5),
    )
    async with host:
        assert host.capability(store).provider == "net"


def test_volatile_must_be_a_bool(make_host: Any) -> None:
    bad = provider("odd")
    type(bad).volatile = "yes"  # type: ignore[misc]
    host = make_host(bad)
    info = {i.name: i for i in host.plugins()}["odd"]
    assert info.state == "error"
    assert "volatile" in (info.error or "")
