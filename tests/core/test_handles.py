"""Capability selection (SPEC §2.2), pinning without fallback, handles and `use` proxies."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from aalis_core import Capability, CapabilityAbsent, Plugin
from aalis_core._handles import unwrap

store = Capability("store", object)


class Backend:
    def __init__(self, label: str) -> None:
        self.label = label
        self.calls = 0

    async def read(self) -> str:
        self.calls += 1
        return self.label

    def sync_read(self) -> str:
        return self.label


class RichBackend(Backend):
    async def count(self) -> int:  # an optional method
        return 42


def provider(name: str, priority: int = 0, backend: Backend | None = None) -> Plugin:
    class P(Plugin):
        provides = (store,)

        async def start(self, ctx: Any) -> None:
            self.backend = backend or Backend(name)
            ctx.provide(store, self.backend, priority=priority)

    P.name = name  # type: ignore[misc]
    return P()


class Consumer(Plugin):
    name = "consumer"
    uses: ClassVar = {"store": store}

    async def start(self, ctx: Any) -> None:
        self.ctx = ctx


async def test_highest_priority_wins_then_load_order(make_host: Any) -> None:
    host = make_host(provider("low", -100), provider("high-a", 10), provider("high-b", 10))
    async with host:
        handle = host.capability(store)
        assert handle.present
        assert handle.provider == "high-a"  # same priority: earlier in load order
        assert await handle.use.read() == "high-a"
        assert host.providers(store) == ["high-a", "high-b", "low"]


async def test_capabilities_default_provider_beats_priority(make_host: Any) -> None:
    host = make_host(
        provider("a", 10), provider("b", 0), config={"capabilities": {"store": {"provider": "b"}}}
    )
    async with host:
        assert host.capability(store).provider == "b"


async def test_consumer_pin_beats_default(make_host: Any) -> None:
    consumer = Consumer()
    host = make_host(
        provider("a", 10),
        provider("b", 0),
        consumer,
        config={
            "capabilities": {"store": {"provider": "b"}},
            "consumers": {"consumer": {"store": "a"}},
        },
    )
    async with host:
        assert consumer.ctx.caps.store.provider == "a"
        assert host.capability(store).provider == "b"  # consumer "host" uses the default
        info = {p.name: p for p in host.plugins()}["consumer"]
        assert info.bindings == {"store": "a"}


async def test_pin_to_inactive_provider_is_absent_never_falls_back(make_host: Any) -> None:
    class Broken(Plugin):
        name = "broken"
        provides = (store,)

        async def start(self, ctx: Any) -> None:
            raise RuntimeError("cannot open database")

    consumer = Consumer()
    host = make_host(
        provider("fine", 10),
        Broken(),
        consumer,
        config={"consumers": {"consumer": {"store": "broken"}}},
    )
    async with host:
        handle = consumer.ctx.caps.store
        assert not handle.present
        assert handle.provider is None
        assert handle.pinned == "broken"
        with pytest.raises(CapabilityAbsent) as err:
            _ = handle.use
        assert err.value.capability == "store"
        assert err.value.consumer == "consumer"
        assert "broken" in str(err.value)
        # the host itself is not pinned and gets the working provider
        assert host.capability(store).provider == "fine"


async def test_default_pin_to_disabled_plugin_is_absent(make_host: Any) -> None:
    host = make_host(
        provider("a"),
        provider("b"),
        config={"plugins": {"disabled": ["b"]}, "capabilities": {"store": {"provider": "b"}}},
    )
    async with host:
        assert not host.capability(store).present


async def test_explicit_provider_argument_pins_the_handle(make_host: Any) -> None:
    host = make_host(provider("a", 10), provider("b", 0))
    async with host:
        assert host.capability(store, provider="b").provider == "b"
        assert not host.capability(store, provider="nope").present


async def test_use_absent_names_capability_and_consumer(make_host: Any) -> None:
    host = make_host()
    async with host:
        handle = host.capability(store, "cli")
        assert not handle.present
        with pytest.raises(CapabilityAbsent, match=r"'store'.*'cli'"):
            _ = handle.use


async def test_present_flips_when_provider_stops(make_host: Any) -> None:
    host = make_host(provider("a"))
    async with host:
        handle = host.capability(store)
        assert handle.present
    assert not handle.present
    assert handle.provider is None
    with pytest.raises(CapabilityAbsent):
        _ = handle.use


async def test_kept_use_proxy_raises_on_every_access_after_provider_stops(
    make_host: Any,
) -> None:
    host = make_host(provider("a"))
    async with host:
        kept = host.capability(store).use
        method = kept.read  # a bound method kept from earlier
        assert await kept.read() == "a"
    with pytest.raises(CapabilityAbsent):
        await kept.read()
    with pytest.raises(CapabilityAbsent):
        await method()
    with pytest.raises(CapabilityAbsent):
        _ = kept.label
    with pytest.raises(CapabilityAbsent):
        kept.sync_read()
    assert "stopped" in repr(kept)


async def test_unpinned_handle_follows_the_winner(make_host: Any) -> None:
    host = make_host(provider("a", 10), provider("b", 5))
    async with host:
        handle = host.capability(store)
        kept = handle.use
        assert handle.provider == "a"
        await host.stop_plugin("a")
        assert handle.provider == "b"
        assert await handle.use.read() == "b"
        with pytest.raises(CapabilityAbsent):  # the proxy stays bound to the old record
            await kept.read()


async def test_pinned_handle_stays_on_its_provider(make_host: Any) -> None:
    host = make_host(provider("a", 10), provider("b", 5))
    async with host:
        handle = host.capability(store, provider="a")
        await host.stop_plugin("a")
        assert not handle.present  # b is active, but a pinned handle never falls back


async def test_proxy_delegates_attributes_and_optional_methods(make_host: Any) -> None:
    backend = RichBackend("rich")
    host = make_host(provider("rich", backend=backend), provider("plain", -1))
    async with host:
        use = host.capability(store).use
        assert hasattr(use, "count")
        assert await use.count() == 42
        assert use.label == "rich"
        use.label = "renamed"
        assert backend.label == "renamed"
        assert unwrap(use) is backend
        plain = host.capability(store, provider="plain").use
        assert not hasattr(plain, "count")
        assert "sync_read" in dir(plain)


async def test_adapter_wraps_each_instance_once_and_is_shared() -> None:
    wrapped: list[Any] = []

    class Wrapper:
        def __init__(self, inner: Any) -> None:
            self.inner = inner
            wrapped.append(self)

        async def read(self) -> str:
            return "wrapped:" + await self.inner.read()

    adapted = Capability("adapted", object, adapter=Wrapper)

    class Prov(Plugin):
        name = "prov"
        provides = (adapted,)

        async def start(self, ctx: Any) -> None:
            ctx.provide(adapted, Backend("x"))

    class Cons(Plugin):
        name = "cons"
        requires: ClassVar = {"adapted": adapted}

        async def start(self, ctx: Any) -> None:
            self.ctx = ctx

    from aalis_core.testing import running_host

    cons = Cons()
    async with running_host(plugins=[cons, Prov()]) as host:
        assert await host.capability(adapted).use.read() == "wrapped:x"
        assert unwrap(cons.ctx.caps.adapted.use) is unwrap(host.capability(adapted).use)
        assert len(wrapped) == 1


async def test_provide_rejects_undeclared_capability(make_host: Any) -> None:
    other = Capability("other", object)

    class Sneaky(Plugin):
        name = "sneaky"

        async def start(self, ctx: Any) -> None:
            ctx.provide(other, object())

    host = make_host(Sneaky())
    async with host:
        info = host.plugins()[0]
        assert info.state == "error"
        assert "without declaring it" in (info.error or "")
        assert not host.capability(other).present


async def test_caps_attribute_error_names_plugin(make_host: Any) -> None:
    consumer = Consumer()
    async with make_host(consumer):
        assert "store" in consumer.ctx.caps
        with pytest.raises(AttributeError, match="consumer"):
            _ = consumer.ctx.caps.nothing
