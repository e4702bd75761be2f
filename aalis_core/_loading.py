"""Loading: from entry points and instances to plugins registered and ready to start.

``Host`` construction runs these steps in order (docs/host.md, "Lifecycle"):

1. ``load_hookspecs``: the hookspecs of ``aalis_core``, of every ``aalis.hookspecs`` entry
   point and the extra ones, so every hook is declared before any plugin registers;
2. ``check_instances``: the ``plugins=[...]`` instances are Plugin instances, one per name;
3. ``discovered_entries``: import the ``aalis.plugins`` entry points (``[plugins] disabled``
   and ``AALIS_LOAD_PLUGINS`` are never imported) and instantiate their classes;
4. ``instance_entries``: the in-process instances after them (an instance wins by name);
5. ``check_declarations``: ``uses``/``requires``/``provides``/``Config`` are well formed;
6. ``apply_config``: validate ``[plugins.<name>]`` tables (``ConfigError`` for the whole
   configuration, per-plugin problems leave that plugin in ``error``);
7. ``register_hooks``: register each loadable plugin in pluggy and refuse hookimpls no
   hookspec declares.

Each step records failures on the plugin's ``PluginEntry`` (state ``error`` or
``disabled`` with a one-line reason) and goes on: one broken plugin never stops the others.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs
import pluggy

import aalis_core._hookspecs as core_hookspecs
from aalis_core._capability import Capability
from aalis_core._config import ConfigError, HostConfig, PluginSchema, validate_plugins
from aalis_core._discovery import (
    check_plugin_class,
    discover_hookspecs,
    discover_plugins,
    error_text,
)
from aalis_core._plugin import Plugin

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from aalis_core._context import PluginContext

PluginState = Literal["discovered", "disabled", "pending", "active", "stopped", "error"]


class PluginEntry:
    """The host's record of one plugin (its instance, state, config, context)."""

    __slots__ = (
        "config",
        "ctx",
        "declared",
        "error",
        "load_index",
        "logger",
        "name",
        "origin",
        "plugin",
        "start_called",
        "starting",
        "state",
        "version",
    )

    def __init__(self, name: str, load_index: int, origin: str) -> None:
        self.name = name
        self.load_index = load_index
        self.origin = origin
        self.plugin: Plugin | None = None
        self.version: str | None = None
        self.state: PluginState = "discovered"
        self.error: str | None = None
        self.config: Any = None
        self.ctx: PluginContext | None = None
        self.logger: FilteringBoundLogger | None = None
        self.start_called = False
        self.starting = False
        #: False when the plugin's class attributes are malformed (never read them then)
        self.declared = True

    def capabilities(self, which: str) -> dict[str, Capability[Any]]:
        """The plugin's ``uses``, ``requires`` or both (``all``); empty when unusable."""
        if self.plugin is None or not self.declared:
            return {}
        if which == "uses":
            return dict(self.plugin.uses)
        if which == "requires":
            return dict(self.plugin.requires)
        return {**self.plugin.uses, **self.plugin.requires}

    def provides(self) -> list[Capability[Any]]:
        """The plugin's declared ``provides``; empty when unusable."""
        if self.plugin is None or not self.declared:
            return []
        return list(self.plugin.provides)

    def fail(self, message: str) -> None:
        """Mark the plugin ``error`` before start, keeping ``message`` as its reason."""
        self.state = "error"
        self.error = message


def load_hookspecs(
    pm: pluggy.PluginManager, extra: Iterable[Any], logger: FilteringBoundLogger
) -> list[tuple[str, str]]:
    """Step 1: declare every hook; returns the ``aalis.hookspecs`` entry points that failed.

    A contract whose hookspec module does not import is reported (and logged), not fatal:
    the plugins implementing its hooks then fail to register with a message naming the
    hook, which is where the user looks.
    """
    pm.add_hookspecs(core_hookspecs)
    errors: list[tuple[str, str]] = []
    for found in discover_hookspecs():
        if found.module is None:
            message = found.error or "import failed"
            errors.append((found.name, message))
            logger.error("hookspecs failed to load", hookspecs=found.name, error=message)
            continue
        try:
            pm.add_hookspecs(found.module)
        except Exception as exc:
            errors.append((found.name, error_text(exc)))
            logger.error("hookspecs failed to load", hookspecs=found.name, error=error_text(exc))
    for namespace in extra:
        pm.add_hookspecs(namespace)
    return errors


def check_instances(instances: Sequence[Plugin]) -> dict[str, Plugin]:
    """Step 2: the ``plugins=[...]`` argument by name; a programming error raises."""
    explicit: dict[str, Plugin] = {}
    for plugin in instances:
        problem = check_plugin_class(type(plugin))
        if problem is not None:
            raise TypeError(f"plugins=[...] takes Plugin instances: {problem}")
        if plugin.name in explicit:
            raise ValueError(f"two plugin instances are named {plugin.name!r}")
        explicit[plugin.name] = plugin
    return explicit


def discovered_entries(skip: Collection[str], disabled: Collection[str]) -> list[PluginEntry]:
    """Step 3: one entry per ``aalis.plugins`` entry point not in ``skip``, instantiated.

    ``skip`` are the names an in-process instance takes over. A constructor that raises
    (``SystemExit`` too) leaves that plugin in ``error``.
    """
    entries: list[PluginEntry] = []
    taken = set(skip)
    for found in discover_plugins(disabled=disabled):
        if found.name in taken:  # an instance's name, or a duplicate entry point
            continue
        taken.add(found.name)
        entry = PluginEntry(found.name, len(entries), found.distribution or "entry point")
        entry.version = found.version
        entry.state = found.state
        entry.error = found.error
        if found.plugin_class is not None:
            try:
                entry.plugin = found.plugin_class()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit too
                entry.fail(f"could not instantiate: {error_text(exc)}")
        entries.append(entry)
    return entries


def instance_entries(
    explicit: Mapping[str, Plugin], disabled: Collection[str], first_index: int
) -> list[PluginEntry]:
    """Step 4: the in-process instances, loaded after every discovered plugin."""
    entries: list[PluginEntry] = []
    for index, (name, plugin) in enumerate(explicit.items(), start=first_index):
        entry = PluginEntry(name, index, "in-process")
        entry.plugin = plugin
        entry.version = type(plugin).version
        if name in disabled:
            entry.state = "disabled"
            entry.error = "disabled in [plugins] disabled"
        entries.append(entry)
    return entries


def declaration_problem(plugin: Plugin) -> str | None:
    """Why a plugin's class attributes cannot be used (None when they are fine).

    Checked before anything reads them, so a malformed declaration fails that plugin with
    a clear message instead of an AttributeError deep in the host.
    """
    name = plugin.name
    for attr in ("uses", "requires"):
        value = getattr(plugin, attr, None)
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Capability) for k, v in value.items()
        ):
            return f"plugin {name!r}: `{attr}` must map names to Capability objects"
    provides = getattr(plugin, "provides", None)
    if isinstance(provides, Capability) or not isinstance(provides, tuple | list | frozenset):
        return f"plugin {name!r}: `provides` must be a tuple of Capability objects"
    if not all(isinstance(c, Capability) for c in provides):
        return f"plugin {name!r}: `provides` must be a tuple of Capability objects"
    if not isinstance(getattr(plugin, "volatile", False), bool):
        return f"plugin {name!r}: `volatile` must be True or False"
    config_class = getattr(plugin, "Config", None)
    if config_class is not None and not attrs.has(config_class):
        return f"plugin {name!r}: `Config` must be an attrs class (got {config_class!r})"
    return None


def check_declarations(entries: Iterable[PluginEntry]) -> None:
    """Step 5: fail (and never read again) the plugins whose declarations are malformed."""
    for entry in entries:
        if entry.plugin is not None and entry.state == "discovered":
            problem = declaration_problem(entry.plugin)
            if problem is not None:
                entry.fail(problem)
                entry.declared = False


def apply_config(config: HostConfig, entries: Mapping[str, PluginEntry]) -> dict[str, ConfigError]:
    """Step 6: validate the plugin tables; returns the plugins whose table is invalid.

    Raises ``ConfigError`` when the configuration as a whole is wrong (nothing starts). A
    plugin whose required keys have no table is ``disabled``; one whose ``Config`` class
    crashes or whose table is invalid is ``error``; the others get their config object.
    """
    schemas: dict[str, PluginSchema] = {}
    for name, entry in entries.items():
        loaded = entry.plugin is not None and entry.state == "discovered"
        schemas[name] = PluginSchema(
            name=name,
            loaded=loaded,
            config_class=(
                type(entry.plugin).Config if loaded and entry.plugin is not None else None
            ),
            provides=frozenset(c.name for c in entry.provides()),
            consumes=frozenset(c.name for c in entry.capabilities("all").values()),
        )
    result = validate_plugins(config, schemas)  # raises ConfigError
    for name, reason in result.unconfigured.items():
        entries[name].state = "disabled"
        entries[name].error = reason
    for name, reason in result.broken.items():
        entries[name].fail(reason)
    invalid = {name: ConfigError(problems=problems) for name, problems in result.invalid.items()}
    for name, error in invalid.items():
        entries[name].fail(f"invalid configuration: {error}")
    for name, value in result.configs.items():
        entries[name].config = value
    return invalid


def hook_problem(pm: pluggy.PluginManager, entry: PluginEntry) -> str | None:
    """Step 7 for one plugin: register it in pluggy; why it cannot be (None: registered).

    pluggy checks an impl against its spec; what it leaves alone is an impl of a hook no
    spec declares (``check_pending`` for one plugin), which would otherwise be a silent
    no-op because of a typo. ``@hookimpl(optionalhook=True)`` opts out.
    """
    plugin = entry.plugin
    try:
        pm.register(plugin, name=entry.name)
    except Exception as exc:
        return f"invalid hook implementation: {error_text(exc)}"
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and not impl.optionalhook:
                pm.unregister(plugin)
                return (
                    f"plugin {entry.name!r} implements hook {caller.name!r}, which no "
                    "loaded contract declares (is the contract installed, is the name "
                    "spelled right?)"
                )
    return None


__all__ = [
    "PluginEntry",
    "PluginState",
    "apply_config",
    "check_declarations",
    "check_instances",
    "declaration_problem",
    "discovered_entries",
    "hook_problem",
    "instance_entries",
    "load_hookspecs",
]
