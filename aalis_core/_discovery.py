"""Finding plugins and hookspecs through entry points.

Plugins are ordinary distributions: ``[project.entry-points."aalis.plugins"] name =
"module:Class"``. Contracts publish their hookspec modules under ``aalis.hookspecs`` so the
host can declare every hook before any plugin registers, without importing a contract.

Discovery never raises for one broken plugin: a plugin whose import fails, whose object is
not a ``Plugin`` subclass, or whose entry-point name differs from ``Plugin.name`` is
reported with state ``error`` and its message, and the others load.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from aalis_core._logging import redact
from aalis_core._plugin import Plugin

if TYPE_CHECKING:
    from importlib_metadata import EntryPoint as MetadataEntryPoint

    from aalis_core._entry_scan import FoundEntryPoint

    #: an entry point as ``importlib_metadata`` or ``aalis_core._entry_scan`` reads it
    EntryPoint = MetadataEntryPoint | FoundEntryPoint

#: What discovery can tell of a plugin: the first states of a host's ``PluginState``.
DiscoveryState = Literal["discovered", "disabled", "error"]

PLUGINS_GROUP = "aalis.plugins"
HOOKSPECS_GROUP = "aalis.hookspecs"
LOAD_PLUGINS_ENV = "AALIS_LOAD_PLUGINS"


@attrs.define
class DiscoveredPlugin:
    """An entry point in ``aalis.plugins`` and what became of loading it."""

    name: str
    #: ``discovered`` (class loaded), ``disabled`` (not loaded on purpose) or ``error``
    state: DiscoveryState
    plugin_class: type[Plugin] | None = None
    version: str | None = None
    distribution: str | None = None
    error: str | None = None
    value: str = ""


@attrs.define
class DiscoveredHookspecs:
    """A module published in ``aalis.hookspecs`` (``module`` is None when it failed)."""

    name: str
    module: Any = None
    distribution: str | None = None
    error: str | None = None


def load_plugins_filter(environ: dict[str, str] | None = None) -> frozenset[str] | None:
    """Names from ``AALIS_LOAD_PLUGINS`` (None when unset; set but empty = load none)."""
    env = os.environ if environ is None else environ
    raw = env.get(LOAD_PLUGINS_ENV)
    if raw is None:
        return None
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


_cache: tuple[tuple[str, ...], dict[str, list[EntryPoint]]] | None = None
_DIST_DIR = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info")


def _entry_points(group: str) -> list[EntryPoint]:
    """Entry points of ``group``; both aalis groups are read in one scan per ``sys.path``.

    Scanning every installed distribution is the dominant cost of ``aalis`` start-up in a
    large environment: ``aalis_core._entry_scan`` reads only the ``entry_points.txt`` files
    that name an aalis group; ``importlib_metadata`` reads what it cannot (zips, eggs).
    """
    global _cache
    key = tuple(sys.path)
    if _cache is None or _cache[0] != key:
        from aalis_core._entry_scan import scan

        wanted = (PLUGINS_GROUP, HOOKSPECS_GROUP)
        fast = scan(key, wanted)
        groups: dict[str, list[EntryPoint]]
        if fast is not None:
            groups = {group: list(eps) for group, eps in fast.items()}
        else:
            import importlib_metadata

            groups = {group: [] for group in wanted}
            for ep in importlib_metadata.entry_points():
                if ep.group in groups:
                    groups[ep.group].append(ep)
        _cache = (key, groups)
    return list(_cache[1].get(group, ()))


def _dist_info(ep: EntryPoint) -> tuple[str | None, str | None]:
    """Distribution name and version, from the ``.dist-info`` folder name when possible.

    Reading METADATA means parsing an e-mail message per plugin; the folder name of an
    installed wheel already says ``<name>-<version>``.
    """
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    folder = getattr(getattr(dist, "_path", None), "name", "")
    match = _DIST_DIR.fullmatch(folder) if isinstance(folder, str) else None
    if match:
        return match["name"], match["version"]
    try:
        return dist.name, dist.version
    except Exception:  # broken METADATA: the plugin still loads, without a version
        return None, None


def error_text(exc: BaseException) -> str:
    """A one-line, redacted description of an exception for ``PluginInfo.error``."""
    text = str(exc).strip()
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return redact(" ".join(line.split()))


def discover_plugins(
    disabled: Collection[str] = (),
    only: Collection[str] | None = None,
    entry_points: Iterable[EntryPoint] | None = None,
) -> list[DiscoveredPlugin]:
    """Load the plugin classes of every ``aalis.plugins`` entry point, sorted by name.

    ``only`` (default: ``AALIS_LOAD_PLUGINS``) restricts which are imported; names in
    ``disabled`` are not imported at all. Both are reported as ``disabled`` with a reason.
    Sorting by name makes the load order, which breaks priority ties, stable across
    machines (entry-point order follows ``sys.path`` and install order).
    """
    if only is None:
        only = load_plugins_filter()
    eps = list(entry_points) if entry_points is not None else _entry_points(PLUGINS_GROUP)
    eps.sort(key=lambda ep: ep.name)
    seen: dict[str, DiscoveredPlugin] = {}
    result: list[DiscoveredPlugin] = []
    disabled_set = set(disabled)
    for ep in eps:
        dist_name, dist_version = _dist_info(ep)
        item = DiscoveredPlugin(
            name=ep.name,
            state="discovered",
            version=dist_version,
            distribution=dist_name,
            value=ep.value,
        )
        if ep.name in seen:
            other = seen[ep.name]
            if other.value == ep.value and other.distribution == dist_name:
                continue  # the same distribution visible twice on sys.path
            item.state = "error"
            item.error = (
                f"duplicate plugin name {ep.name!r}: also provided by "
                f"{other.distribution or other.value}"
            )
            result.append(item)
            continue
        seen[ep.name] = item
        result.append(item)
        if only is not None and ep.name not in only:
            item.state = "disabled"
            item.error = f"not listed in {LOAD_PLUGINS_ENV}"
            continue
        if ep.name in disabled_set:
            item.state = "disabled"
            item.error = "disabled in [plugins] disabled"
            continue
        try:
            obj = ep.load()
        except (Exception, SystemExit) as exc:  # a module calling sys.exit() too
            item.state = "error"
            item.error = f"import failed: {error_text(exc)}"
            continue
        problem = check_plugin_class(obj, ep.name)
        if problem:
            item.state = "error"
            item.error = problem
            continue
        item.plugin_class = obj
        if obj.version:
            item.version = obj.version
    return result


def check_plugin_class(obj: Any, expected_name: str | None = None) -> str | None:
    """Why ``obj`` is not a usable plugin class (None when it is)."""
    if not (isinstance(obj, type) and issubclass(obj, Plugin)):
        return f"entry point does not name a Plugin subclass (got {obj!r})"
    name = getattr(obj, "name", "")
    if not isinstance(name, str) or not name:
        return f"{obj.__qualname__} has no Plugin.name"
    if expected_name is not None and name != expected_name:
        return (
            f"entry-point name {expected_name!r} does not match Plugin.name {name!r} "
            f"of {obj.__module__}.{obj.__qualname__}"
        )
    return None


def discover_hookspecs(
    entry_points: Iterable[EntryPoint] | None = None,
) -> list[DiscoveredHookspecs]:
    """Import every module published in ``aalis.hookspecs``, sorted by name."""
    eps = list(entry_points) if entry_points is not None else _entry_points(HOOKSPECS_GROUP)
    eps.sort(key=lambda ep: ep.name)
    found: list[DiscoveredHookspecs] = []
    seen: set[str] = set()
    for ep in eps:
        if ep.value in seen:
            continue
        seen.add(ep.value)
        dist_name, _ = _dist_info(ep)
        try:
            module = ep.load()
        except Exception as exc:
            found.append(
                DiscoveredHookspecs(
                    ep.name, distribution=dist_name, error=f"import failed: {error_text(exc)}"
                )
            )
            continue
        found.append(DiscoveredHookspecs(ep.name, module=module, distribution=dist_name))
    return found


__all__ = [
    "HOOKSPECS_GROUP",
    "LOAD_PLUGINS_ENV",
    "PLUGINS_GROUP",
    "DiscoveredHookspecs",
    "DiscoveredPlugin",
    "DiscoveryState",
    "check_plugin_class",
    "discover_hookspecs",
    "discover_plugins",
    "error_text",
]
