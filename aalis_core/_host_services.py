"""``HostServices``: the part of the host a plugin may call while it runs.

A plugin's context (``ctx.host``) is typed as this Protocol, not as ``Host``: it names the
operations plugins and the contracts' helpers really use (events, hook implementations, the
middleware onion, contributions, a handle for a capability the plugin does not declare) and
nothing of the host's lifecycle, so a plugin cannot, without the type checker objecting,
stop another plugin (``Host.stop_plugin``), start or stop the host, or provide a capability
on another plugin's behalf. At run time ``ctx.host`` is the host's ``HookRunner``
(``host.hooks``), which implements these operations and has nothing else, so the same holds
without a type checker.

It also keeps the host's modules free of import cycles: ``context.py`` and the contracts
depend on this small module, never on ``host.py`` (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from aalis_core._capability import Capability
from aalis_core._handles import Handle

T = TypeVar("T")


class HostServices(Protocol):
    """What a running plugin may ask of its host; ``HookRunner`` implements it.

    ``Host`` satisfies it too (its hook methods are ``host.hooks``'s), so a function taking
    ``HostServices`` accepts a plugin's ``ctx.host`` and an embedding program's ``Host``.
    """

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


#: What ``ctx.provide`` calls: offer ``instance`` for ``capability`` at ``priority``, on
#: behalf of the one plugin the context belongs to (the host binds the plugin's name).
Provide = Callable[[Capability[Any], object, int], None]


__all__ = ["HostServices", "Provide"]
