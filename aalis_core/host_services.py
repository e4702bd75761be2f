"""``HostServices``: the part of the host a plugin may call while it runs.

A plugin's context (``ctx.host``) is typed as this Protocol, not as ``Host``: it names the
operations plugins and the contracts' helpers really use (events, hook implementations, the
middleware onion, contributions, a handle for a capability the plugin does not declare) and
nothing of the host's lifecycle, so a plugin cannot, without the type checker objecting,
stop another plugin (``Host.stop_plugin``), start or stop the host, or provide a capability
on another plugin's behalf. At run time ``ctx.host`` is a ``HostView``, which forwards these
operations and has nothing else, so the same holds without a type checker.

It also keeps the host's modules free of import cycles: ``context.py`` and the contracts
depend on this small module, never on ``host.py`` (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from aalis_core.capability import Capability
from aalis_core.handles import Handle

T = TypeVar("T")


class HostServices(Protocol):
    """What a running plugin may ask of its host; ``Host`` implements it."""

    def capability(
        self, cap: Capability[T], consumer: str | None = None, *, provider: str | None = None
    ) -> Handle[T]:
        """A handle on ``cap`` for ``consumer`` (a plugin passes its own name)."""
        ...

    async def emit(self, event: str, **payload: object) -> None:
        """Call every listener of ``event``; failures are logged, never raised."""
        ...

    async def emit_each(self, event: str, payloads: Iterable[Mapping[str, object]]) -> None:
        """``emit(event, **payload)`` for each payload in order, within one wait."""
        ...

    def hook_impls(self, hook: str) -> list[tuple[str, Callable[..., Any]]]:
        """Implementations of ``hook`` by active plugins, in hook order."""
        ...

    async def run_middleware(
        self,
        hook: str,
        request: object,
        default: Callable[[], object],
        on_error: Callable[[str, BaseException], object],
    ) -> None:
        """Run ``hook`` as an onion around ``default``."""
        ...

    def collect_contributions(self, hook: str) -> list[tuple[str, Any]]:
        """Sync contributions of ``hook`` from active plugins, first per ``id`` wins."""
        ...


class HostView:
    """The ``HostServices`` of one host and nothing more: what ``ctx.host`` is at run time.

    A Protocol only binds the type checker; a plugin written without one (or with ``Any``)
    could still reach ``Host.stop_plugin`` through the real object. The view forwards the
    six services and has no other attribute, so the lifecycle is out of reach at run time
    too. Two views of one host compare equal (and equal to the host itself), so code that
    checks "is this my host" keeps working.
    """

    __slots__ = ("_host",)

    def __init__(self, host: HostServices) -> None:
        self._host = host

    def capability(
        self, cap: Capability[T], consumer: str | None = None, *, provider: str | None = None
    ) -> Handle[T]:
        return self._host.capability(cap, consumer, provider=provider)

    async def emit(self, event: str, **payload: object) -> None:
        await self._host.emit(event, **payload)

    async def emit_each(self, event: str, payloads: Iterable[Mapping[str, object]]) -> None:
        await self._host.emit_each(event, payloads)

    def hook_impls(self, hook: str) -> list[tuple[str, Callable[..., Any]]]:
        return self._host.hook_impls(hook)

    async def run_middleware(
        self,
        hook: str,
        request: object,
        default: Callable[[], object],
        on_error: Callable[[str, BaseException], object],
    ) -> None:
        await self._host.run_middleware(hook, request, default, on_error)

    def collect_contributions(self, hook: str) -> list[tuple[str, Any]]:
        return self._host.collect_contributions(hook)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HostView):
            return self._host is other._host
        return self._host is other

    def __hash__(self) -> int:
        return hash(id(self._host))

    def __repr__(self) -> str:
        return f"<HostView of {self._host!r}>"


#: What ``ctx.provide`` calls: offer ``instance`` for ``capability`` at ``priority``, on
#: behalf of the one plugin the context belongs to (the host binds the plugin's name).
Provide = Callable[[Capability[Any], object, int], None]


__all__ = ["HostServices", "HostView", "Provide"]
