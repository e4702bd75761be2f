"""``PluginContext``: everything a plugin gets from the host in ``start``.

The context is the plugin's only door into the host: its validated config, its logger, its
capability handles, where to keep data, and how to provide capabilities and emit events.
Keeping it small and explicit is what lets a plugin be tested with a throwaway host.

``ctx.host`` is typed as ``HostServices`` (events, hooks, middleware, contributions, extra
handles), not as the ``Host``: a plugin has no business stopping another plugin or the host.
``ctx.provide`` goes through a function the host binds to this one plugin, so the context
calls nothing private of the host and cannot provide in another plugin's name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aalis_core._handles import Handle

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from aalis_core._capability import Capability
    from aalis_core._host_services import HostServices, Provide


class Caps(Mapping[str, Handle[Any]]):
    """The plugin's handles, by the keys of its ``uses`` and ``requires``.

    Attribute access (``ctx.caps.memory``) is the normal spelling; it is also a read-only
    mapping, so ``"memory" in ctx.caps`` and iteration work.
    """

    __slots__ = ("_handles", "_owner")

    def __init__(self, owner: str, handles: Mapping[str, Handle[Any]]) -> None:
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_handles", dict(handles))

    def __getattr__(self, key: str) -> Handle[Any]:
        handles: dict[str, Handle[Any]] = object.__getattribute__(self, "_handles")
        try:
            return handles[key]
        except KeyError:
            owner = object.__getattribute__(self, "_owner")
            known = ", ".join(sorted(handles)) or "none"
            raise AttributeError(
                f"plugin {owner!r} declares no capability {key!r} in uses/requires "
                f"(declared: {known})"
            ) from None

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("capability handles are read-only")

    def __getitem__(self, key: str) -> Handle[Any]:
        handles: dict[str, Handle[Any]] = object.__getattribute__(self, "_handles")
        return handles[key]

    def __iter__(self) -> Iterator[str]:
        return iter(object.__getattribute__(self, "_handles"))

    def __len__(self) -> int:
        return len(object.__getattribute__(self, "_handles"))

    def __repr__(self) -> str:
        handles: dict[str, Handle[Any]] = object.__getattribute__(self, "_handles")
        return f"Caps({', '.join(f'{k}={h.provider}' for k, h in handles.items())})"


class PluginContext:
    """What ``Plugin.start(ctx)`` receives.

    ``config`` is the instance of the plugin's ``Config`` class validated from
    ``[plugins.<name>]`` (None when the plugin declares no ``Config``): the host starts a
    plugin only once its table validated, so a plugin with a ``Config`` always gets an
    instance of it. ``data_dir`` is the host's data directory; the host does not create it, a
    plugin that writes there calls ``ctx.data_dir.mkdir(parents=True, exist_ok=True)`` first.
    ``host`` is what the plugin may ask of the host while it runs (``HostServices``).
    ``provide`` is the host's registration function bound to this plugin.
    """

    def __init__(
        self,
        *,
        name: str,
        config: Any,
        logger: FilteringBoundLogger,
        caps: Caps,
        data_dir: Path,
        host: HostServices,
        provide: Provide,
    ) -> None:
        self.name = name
        self.config = config
        self.logger = logger
        self.caps = caps
        self.data_dir = data_dir
        self.host = host
        self._provide = provide

    def provide(self, capability: Capability[Any], instance: object, priority: int = 0) -> None:
        """Offer ``instance`` as a provider of ``capability`` (synchronous, call from ``start``).

        The capability must be listed in the plugin's ``provides`` (the host orders start-up
        by those declarations). If the capability has an ``adapter``, the instance is wrapped
        once and every consumer of this provider shares the wrapped object. Higher
        ``priority`` wins when no configuration pins a provider.
        """
        self._provide(capability, instance, priority)

    async def emit(self, event: str, **payload: object) -> None:
        """Emit an event to every active plugin (see ``Host.emit``)."""
        await self.host.emit(event, **payload)

    def __repr__(self) -> str:
        return f"<PluginContext {self.name!r}>"


__all__ = ["Caps", "PluginContext"]
