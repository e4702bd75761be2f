"""``PluginInfo``: what the host reports of each plugin (``host.plugins()``, ``aalis plugins``).

Built from the host's records and its capability registry at the moment of the call, so the
bindings shown are the ones a consumer would get now.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from aalis_core._handles import CapabilityRegistry
from aalis_core._loading import PluginEntry, PluginState


@attrs.frozen
class PluginInfo:
    """What ``host.plugins()`` reports for one plugin (and ``aalis plugins`` prints)."""

    name: str
    version: str | None
    state: PluginState
    error: str | None
    #: names of the capabilities the plugin declares in ``provides``
    provides: list[str]
    #: capability name -> provider plugin its handle is bound to now (None: absent)
    bindings: dict[str, str | None]
    #: the plugin's ``label`` (what kind of thing it provides, e.g. "lexical"), if it has one
    label: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (used by ``aalis plugins --json``); ``label`` only when set."""
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "state": self.state,
            "error": self.error,
            "provides": list(self.provides),
            "bindings": dict(self.bindings),
        }
        if self.label is not None:
            out["label"] = self.label
        return out


def _label(plugin: object) -> str | None:
    label = getattr(plugin, "label", None)
    return label if isinstance(label, str) and label else None


def plugin_infos(entries: Iterable[PluginEntry], registry: CapabilityRegistry) -> list[PluginInfo]:
    """One ``PluginInfo`` per entry, in load order, bindings resolved for the plugin itself."""
    infos: list[PluginInfo] = []
    for entry in sorted(entries, key=lambda e: e.load_index):
        bindings: dict[str, str | None] = {}
        for cap in entry.capabilities("all").values():
            record = registry.resolve(cap.name, entry.name)
            bindings[cap.name] = record.plugin if record is not None else None
        infos.append(
            PluginInfo(
                name=entry.name,
                version=entry.version,
                state=entry.state,
                error=entry.error,
                provides=[c.name for c in entry.provides()],
                bindings=bindings,
                label=_label(entry.plugin),
            )
        )
    return infos


__all__ = ["PluginInfo", "plugin_infos"]
