"""The pluggy manager the host registers plugins with.

pluggy finds hook implementations by looking up every name in ``dir(plugin)`` with
``inspect.getattr_static``; a plugin object has some seventy names, half of them the dunders
every object carries, and that lookup was about a tenth of ``aalis plugins`` (see
docs/performance.md). A dunder is never a hook implementation (a hook's own name never
starts with ``__``, and ``specname=`` is set on ordinary methods), so they are skipped before
the lookup. Everything else is pluggy's own rule.
"""

from __future__ import annotations

from typing import Any

import pluggy


class HookManager(pluggy.PluginManager):
    """``pluggy.PluginManager`` that does not inspect dunder attributes for hookimpls."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        if name.startswith("__"):
            return None
        return super().parse_hookimpl_opts(plugin, name)


__all__ = ["HookManager"]
