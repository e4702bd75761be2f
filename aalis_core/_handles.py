"""Handles: how a consumer reaches the one provider it is bound to.

A consumer never holds a provider object directly. It holds a ``Handle`` per capability,
and the handle answers two questions at the moment they are asked: is a provider bound
(``present``) and which object to call (``use``). That is what lets providers come and go
(a backend failing to start, the host stopping) without consumers keeping stale objects:

- ``use`` returns a proxy bound to the provider *record* of that moment. When that
  provider stops, every attribute access or call on the proxy raises ``CapabilityAbsent``
  instead of writing into a closed database.
- Unpinned handles re-resolve on every read, so they follow the current winner.
- Pinned handles (``[consumers.<c>]`` or ``[capabilities.<cap>] provider``) stay on their
  provider and are absent while it is not active: falling back to another store would
  split one conversation across two databases.
- A *volatile* provider (an in-memory store) never serves an unpinned handle while a durable
  plugin that declares the same capability is installed and not disabled, even if it failed
  to start: chatting into RAM while the database is broken would lose every word at exit
  without anyone noticing (docs/host/providers.md, "No silent loss of durability").
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, NamedTuple, TypeVar, cast

from aalis_core._capability import Capability, CapabilityAbsent

T = TypeVar("T")


class ProviderRecord:
    """One ``ctx.provide(...)`` call: the (adapted) instance and how it ranks.

    ``live`` turns False exactly once, when the providing plugin stops or fails; proxies
    check it on every access.
    """

    __slots__ = ("capability", "instance", "live", "load_index", "plugin", "priority", "volatile")

    def __init__(
        self,
        capability: Capability[Any],
        plugin: str,
        instance: Any,
        priority: int,
        load_index: int,
        volatile: bool = False,
    ) -> None:
        self.capability = capability
        self.plugin = plugin
        self.instance = instance
        self.priority = priority
        self.load_index = load_index
        self.volatile = volatile
        self.live = True

    def rank(self) -> tuple[int, int]:
        """Sort key: higher priority first, then earlier load order."""
        return (self.priority, -self.load_index)

    def __repr__(self) -> str:
        state = "live" if self.live else "gone"
        return (
            f"<provider {self.capability.name!r} from {self.plugin!r} "
            f"priority={self.priority} {state}>"
        )


class DurableDeclarer(NamedTuple):
    """A non-volatile plugin that declares a capability in ``provides`` and is not disabled.

    ``active`` is False when it is installed but not serving (failed, pending, stopped);
    ``error`` is why, as the host recorded it.
    """

    plugin: str
    active: bool
    state: str
    error: str | None


DeclarersFn = Callable[[str], list[DurableDeclarer]]


class CapabilityRegistry:
    """Every live provider record, plus the pins from configuration.

    ``generation`` increases on every change so that handles can cache their resolution
    and stay cheap on the hot path (a ``save_message`` per chat turn).
    """

    def __init__(
        self,
        defaults: Mapping[str, str] | None = None,
        consumer_pins: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self._records: dict[str, list[ProviderRecord]] = {}
        self._defaults: dict[str, str] = dict(defaults or {})
        self._pins: dict[str, dict[str, str]] = {
            consumer: dict(pins) for consumer, pins in (consumer_pins or {}).items()
        }
        self.generation = 0
        self._declarers: DeclarersFn = lambda _capability: []

    def set_declarers(self, declarers: DeclarersFn) -> None:
        """Where to learn which durable plugins declare a capability (the host's states).

        The host calls ``touch()`` whenever a plugin's state changes, so cached handle
        resolutions are recomputed.
        """
        self._declarers = declarers
        self.generation += 1

    def touch(self) -> None:
        """A plugin state changed: handles re-resolve on their next read."""
        self.generation += 1

    def durable_declarers(self, capability: str) -> list[DurableDeclarer]:
        """Non-volatile, not disabled plugins that declare ``capability`` in ``provides``."""
        return self._declarers(capability)

    # -- pins -----------------------------------------------------------------------------
    def pin_for(self, capability: str, consumer: str) -> str | None:
        """The provider ``consumer`` is pinned to for ``capability`` (docs/host/providers.md).

        Rules 1 and 2 of the selection: a ``[consumers]`` pin, then a ``[capabilities]`` one.
        """
        pinned = self._pins.get(consumer, {}).get(capability)
        if pinned is not None:
            return pinned
        return self._defaults.get(capability)

    # -- records --------------------------------------------------------------------------
    def add(self, record: ProviderRecord) -> None:
        """Register a live provider record."""
        self._records.setdefault(record.capability.name, []).append(record)
        self.generation += 1

    def withdraw(self, plugin: str) -> list[ProviderRecord]:
        """Remove every record of ``plugin`` and mark them gone (kept proxies start raising)."""
        removed: list[ProviderRecord] = []
        for name, records in list(self._records.items()):
            keep = [r for r in records if r.plugin != plugin]
            removed.extend(r for r in records if r.plugin == plugin)
            if keep:
                self._records[name] = keep
            else:
                del self._records[name]
        for record in removed:
            record.live = False
        if removed:
            self.generation += 1
        return removed

    def records(self, capability: str | None = None) -> list[ProviderRecord]:
        """Live records, of one capability or all, in registration order."""
        if capability is not None:
            return list(self._records.get(capability, ()))
        return [r for records in self._records.values() for r in records]

    def resolve(
        self, capability: str, consumer: str, pin: str | None = None
    ) -> ProviderRecord | None:
        """Apply the selection rules: explicit pin > consumer pin > default > ranking."""
        records = self._records.get(capability)
        target = pin if pin is not None else self.pin_for(capability, consumer)
        if not records:
            return None
        if target is not None:
            for record in records:
                if record.plugin == target:
                    return record
            return None
        durable = [r for r in records if not r.volatile]
        if durable:
            return max(durable, key=ProviderRecord.rank)
        if self._declarers(capability):
            return None  # a durable store is installed but down: never stand in for it
        return max(records, key=ProviderRecord.rank)

    def absence_reason(self, capability: str, consumer: str, pin: str | None = None) -> str:
        """Why ``consumer`` has no provider of ``capability``: one clause for an error line."""
        pinned = pin if pin is not None else self.pin_for(capability, consumer)
        if pinned is not None:
            return f"pinned provider {pinned!r} is not active"
        declarers = self._declarers(capability)
        live = {r.plugin for r in self._records.get(capability, ())}
        down = [d for d in declarers if d.plugin not in live]
        if down:
            parts = [_down_clause(d, capability) for d in down]
            volatile = [r.plugin for r in self._records.get(capability, ()) if r.volatile]
            tail = (
                f"; the volatile {', '.join(volatile)} is not used in its place" if volatile else ""
            )
            return "; ".join(parts) + tail
        return "no active provider"

    def handle(self, capability: Capability[T], consumer: str, pin: str | None = None) -> Handle[T]:
        """A new handle for ``consumer`` on ``capability``."""
        return Handle(self, capability, consumer, pin)


_STATE_WORDS = {
    "error": "failed",
    "pending": "is waiting",
    "stopped": "stopped",
    "discovered": "has not started",
    "active": "is active",
}


def _down_clause(declarer: DurableDeclarer, capability: str) -> str:
    """``memory-sqlite failed (start failed: file is not a database)``."""
    state = _STATE_WORDS.get(declarer.state, f"is {declarer.state}")
    if declarer.error:
        return f"{declarer.plugin} {state} ({declarer.error})"
    if declarer.state == "active":
        return f"{declarer.plugin} is active but provides no {capability!r}"
    return f"{declarer.plugin} {state}"


class Handle(Generic[T]):
    """A consumer's binding to at most one provider of a capability.

    ``present`` and ``provider`` are evaluated when read; ``use`` returns a proxy that is
    valid for as long as the provider it was bound to stays active.
    """

    __slots__ = (
        "_cache_gen",
        "_cache_proxy",
        "_cache_record",
        "_pin",
        "_registry",
        "capability",
        "consumer",
    )

    def __init__(
        self,
        registry: CapabilityRegistry,
        capability: Capability[T],
        consumer: str,
        pin: str | None = None,
    ) -> None:
        self._registry = registry
        self.capability = capability
        self.consumer = consumer
        self._pin = pin
        self._cache_gen = -1
        self._cache_record: ProviderRecord | None = None
        self._cache_proxy: T | None = None

    def _record(self) -> ProviderRecord | None:
        registry = self._registry
        if self._cache_gen != registry.generation:
            record = registry.resolve(self.capability.name, self.consumer, self._pin)
            if record is not self._cache_record:
                self._cache_record = record
                self._cache_proxy = None
            self._cache_gen = registry.generation
        return self._cache_record

    @property
    def pinned(self) -> str | None:
        """The provider this handle is pinned to, or None when it follows the winner."""
        if self._pin is not None:
            return self._pin
        return self._registry.pin_for(self.capability.name, self.consumer)

    @property
    def present(self) -> bool:
        """True when a provider is bound right now."""
        return self._record() is not None

    @property
    def provider(self) -> str | None:
        """Name of the plugin currently bound, or None when absent."""
        record = self._record()
        return record.plugin if record is not None else None

    @property
    def use(self) -> T:
        """The bound provider, behind a proxy that dies with it.

        Raises ``CapabilityAbsent`` (naming capability and consumer) when no provider is
        bound. The proxy delegates attribute access, so ``hasattr(handle.use, "x")``
        reflects the provider's optional methods.
        """
        record = self._record()
        if record is None:
            reason = self._registry.absence_reason(self.capability.name, self.consumer, self._pin)
            raise CapabilityAbsent(self.capability.name, self.consumer, reason)
        proxy = self._cache_proxy
        if proxy is None:
            proxy = cast(T, ProviderProxy(record, self.consumer))
            self._cache_proxy = proxy
        return proxy

    def __repr__(self) -> str:
        return (
            f"<Handle {self.capability.name!r} for {self.consumer!r} -> "
            f"{self.provider or 'absent'}>"
        )


def _guard(record: ProviderRecord, consumer: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a provider method so calling it after the provider left raises."""
    name = record.capability.name
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            if not record.live:
                raise CapabilityAbsent(name, consumer, f"provider {record.plugin!r} stopped")
            return await func(*args, **kwargs)

        return guarded_async

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not record.live:
            raise CapabilityAbsent(name, consumer, f"provider {record.plugin!r} stopped")
        return func(*args, **kwargs)

    return guarded


class ProviderProxy:
    """Delegates to one provider record's instance while that record is live.

    Methods are wrapped once and cached (they re-check liveness on each call); plain
    attributes are read through on every access, so they stay current.
    """

    __slots__ = ("_aalis_consumer", "_aalis_methods", "_aalis_record")

    def __init__(self, record: ProviderRecord, consumer: str) -> None:
        object.__setattr__(self, "_aalis_record", record)
        object.__setattr__(self, "_aalis_consumer", consumer)
        object.__setattr__(self, "_aalis_methods", {})

    def _aalis_target(self) -> Any:
        record: ProviderRecord = object.__getattribute__(self, "_aalis_record")
        if not record.live:
            consumer: str = object.__getattribute__(self, "_aalis_consumer")
            raise CapabilityAbsent(
                record.capability.name, consumer, f"provider {record.plugin!r} stopped"
            )
        return record.instance

    def __getattr__(self, name: str) -> Any:
        target = object.__getattribute__(self, "_aalis_target")()
        methods: dict[str, Any] = object.__getattribute__(self, "_aalis_methods")
        cached = methods.get(name)
        if cached is not None:
            return cached
        value = getattr(target, name)
        if inspect.ismethod(value) or inspect.isfunction(value):
            record: ProviderRecord = object.__getattribute__(self, "_aalis_record")
            consumer: str = object.__getattribute__(self, "_aalis_consumer")
            wrapped = _guard(record, consumer, value)
            methods[name] = wrapped
            return wrapped
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_aalis_target")(), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "_aalis_target")(), name)

    def __dir__(self) -> Iterator[str]:
        return iter(dir(object.__getattribute__(self, "_aalis_target")()))

    def __repr__(self) -> str:
        record: ProviderRecord = object.__getattribute__(self, "_aalis_record")
        state = "" if record.live else " (stopped)"
        return f"<{record.capability.name} provided by {record.plugin!r}{state}>"


def unwrap(obj: Any) -> Any:
    """Return the provider instance behind a ``use`` proxy (``obj`` itself otherwise).

    Raises ``CapabilityAbsent`` when the provider has gone. Meant for tests and for code
    that must compare identities; normal consumers call through the proxy.
    """
    if isinstance(obj, ProviderProxy):
        return object.__getattribute__(obj, "_aalis_target")()
    return obj


__all__ = [
    "CapabilityRegistry",
    "DurableDeclarer",
    "Handle",
    "ProviderProxy",
    "ProviderRecord",
    "unwrap",
]
