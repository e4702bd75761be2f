"""The ``Plugin`` base class that every Aalis plugin subclasses.

A plugin is an ordinary class found through the ``aalis.plugins`` entry-point group; its
instance is registered in the pluggy manager under ``name``. Class attributes declare what the
host needs to know *before* starting it (capabilities, config schema), so the host can order
start-up and validate configuration without running plugin code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from aalis_core._errors import AalisError

if TYPE_CHECKING:
    from aalis_core._capability import Capability
    from aalis_core._context import PluginContext


class PluginDisabled(AalisError):
    """Raised from ``start`` when a plugin is installed but deliberately not configured.

    The host marks the plugin ``disabled`` with the message instead of ``error``: an
    unconfigured optional backend (MongoDB without a URI) is a choice, not a failure.
    """


class Plugin:
    """Base class for plugins. Subclasses set ``name`` and override what they need."""

    name: ClassVar[str] = ""
    #: Version shown by ``aalis plugins``; defaults to the distribution's version.
    version: ClassVar[str | None] = None
    #: Optional capabilities: ``{"memory": memory}``; ``ctx.caps.memory.present`` tells.
    uses: ClassVar[Mapping[str, Capability[Any]]] = {}
    #: Required capabilities: the plugin stays ``pending`` until each is present.
    requires: ClassVar[Mapping[str, Capability[Any]]] = {}
    #: Capabilities this plugin provides from ``start`` via ``ctx.provide``.
    provides: ClassVar[tuple[Capability[Any], ...]] = ()
    #: A few words on what kind of thing the plugin provides, shown beside its capabilities
    #: by ``aalis plugins`` (e.g. "lexical" for an embedder that matches spelling, not meaning).
    label: ClassVar[str | None] = None
    #: True when what this plugin provides keeps nothing past the process (an in-memory
    #: store). A volatile provider never serves an unpinned handle while a durable plugin
    #: declaring the same capability is installed, even if that one failed to start
    #: (docs/host/providers.md, "No silent loss of durability").
    volatile: ClassVar[bool] = False
    #: attrs class that ``[plugins.<name>]`` is validated into (None: the table must be empty).
    Config: ClassVar[type[Any] | None] = None

    async def start(self, ctx: PluginContext) -> None:
        """Called once the plugin's required capabilities are present."""

    async def stop(self) -> None:
        """Called on shutdown, in reverse start order, even if ``start`` failed half-way."""


__all__ = ["Plugin", "PluginDisabled"]
