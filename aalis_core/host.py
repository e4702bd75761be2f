"""The host: loads plugins, starts them in dependency order, binds capabilities, runs hooks.

Design choices, and why:

- **One broken plugin never takes the host down.** Import, config (for an unconfigured
  plugin), ``start``, ``stop``, middleware and event failures are recorded on that plugin
  (state ``error`` with a redacted one-line message) or reported to the caller, and the
  rest goes on. Only an invalid configuration stops everything, before anything starts.
- **Hooks are declared, never guessed.** Every hookimpl must match a hookspec that
  ``aalis_core`` or a contract (entry point ``aalis.hookspecs``) declares; a plugin that
  implements an undeclared hook fails to load with a message naming plugin and hook,
  instead of being a silent no-op because of a typo.
- **The host walks hookimpls itself** (``hook_impls``) rather than using pluggy's plain
  call, because async hooks need awaiting, per-impl error isolation and a defined order:
  ``tryfirst``, normal, ``trylast``, and within a group the plugins' start order. How they
  are called lives in ``aalis_core.hook_runner``; this module keeps the lifecycle (load,
  validate, start in dependency order, stop) and the capability registry's bookkeeping.
- **Plugins see the host through ``HostServices``** (``aalis_core.host_services``): the
  context hands a plugin the operations it needs at run time, not the lifecycle.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import attrs
import pluggy

import aalis_core.hookspecs as core_hookspecs
from aalis_core.capability import Capability
from aalis_core.config import (
    ConfigError,
    HostConfig,
    PluginSchema,
    default_config,
    load_config,
    parse_config,
    validate_plugins,
)
from aalis_core.containment import PluginTimeout, call_plugin, describe
from aalis_core.context import Caps, PluginContext
from aalis_core.discovery import (
    check_plugin_class,
    discover_hookspecs,
    discover_plugins,
    error_text,
)
from aalis_core.handles import CapabilityRegistry, DurableDeclarer, Handle, ProviderRecord
from aalis_core.hook_runner import HookRunner
from aalis_core.host_services import HostView
from aalis_core.logging import configure_logging, get_logger, redact
from aalis_core.markers import PROJECT_NAME
from aalis_core.plugin import Plugin, PluginDisabled

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

T = TypeVar("T")

PluginState = Literal["discovered", "disabled", "pending", "active", "stopped", "error"]


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


class _Entry:
    """The host's record of one plugin."""

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
        if self.plugin is None or not self.declared:
            return {}
        if which == "uses":
            return dict(self.plugin.uses)
        if which == "requires":
            return dict(self.plugin.requires)
        return {**self.plugin.uses, **self.plugin.requires}

    def provides(self) -> list[Capability[Any]]:
        if self.plugin is None or not self.declared:
            return []
        return list(self.plugin.provides)


_Phase = Literal["new", "starting", "running", "stopping", "stopped"]


def _stop_text(exc: BaseException) -> str:
    """``timed out after 10 s; abandoned`` for a time-out, the error text otherwise."""
    if isinstance(exc, PluginTimeout):
        return f"{exc}; abandoned"
    return describe(exc)


def _declaration_problem(plugin: Plugin) -> str | None:
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


class Host:
    """The Aalis plugin host.

    ``config`` is a mapping shaped like ``aalis.toml`` (relative ``data_dir`` resolved
    against the working directory), an already parsed ``HostConfig``, or None for the
    embedded default (reads no file). ``plugins`` are extra plugin *instances* registered
    beside the discovered ones (an instance wins over a discovered plugin of the same
    name). ``discover=False`` skips the ``aalis.plugins`` entry points; contracts'
    hookspecs (``aalis.hookspecs``) are loaded either way, and ``hookspecs`` adds more
    hookspec modules or classes (tests, embedding applications). ``consumer`` is the
    consumer name of ``capability()`` handles by default (``host``; ``cli`` in commands).

    Construction discovers and imports plugins and validates the whole configuration:
    ``ConfigError`` is raised here, before anything starts.
    """

    def __init__(
        self,
        config: Mapping[str, object] | HostConfig | None = None,
        plugins: Sequence[Plugin] = (),
        *,
        discover: bool = True,
        hookspecs: Iterable[Any] = (),
        consumer: str = "host",
    ) -> None:
        #: consumer name used by ``capability()`` when none is given (``cli`` in commands)
        self.default_consumer = consumer
        if config is None:
            parsed = default_config()
        elif isinstance(config, HostConfig):
            parsed = config
        elif isinstance(config, Mapping):
            parsed = parse_config(config, source="<config dict>", base_dir=Path.cwd())
        else:
            raise TypeError(
                "config must be a mapping, a HostConfig or None; "
                "use Host.from_config(path) to read a file"
            )
        self._config = parsed
        if parsed.host_keys & {"log_level", "log_format"}:
            configure_logging(parsed.host.log_level, parsed.host.log_format)
        self._logger = get_logger(None, component="host")
        self._registry = CapabilityRegistry(parsed.capabilities, parsed.consumers)
        self._registry.set_declarers(self._durable_declarers)
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(core_hookspecs)
        #: hookspec entry points that failed to import: (entry-point name, message)
        self.hookspec_errors: list[tuple[str, str]] = []
        self._entries: dict[str, _Entry] = {}
        self._start_order: list[str] = []
        self._phase: _Phase = "new"
        #: plugin name -> the problems of its ``[plugins.<name>]`` table (plugin in ``error``)
        self._config_errors: dict[str, ConfigError] = {}
        self._hooks = HookRunner(
            self._pm,
            active_order=self._active_order,
            limit=parsed.host.hook_timeout,
            logger_for=self._plugin_logger,
            logger=self._logger,
        )

        for found in discover_hookspecs():
            if found.module is None:
                message = found.error or "import failed"
                self.hookspec_errors.append((found.name, message))
                self._logger.error("hookspecs failed to load", hookspecs=found.name, error=message)
                continue
            try:
                self._pm.add_hookspecs(found.module)
            except Exception as exc:
                self.hookspec_errors.append((found.name, error_text(exc)))
                self._logger.error(
                    "hookspecs failed to load", hookspecs=found.name, error=error_text(exc)
                )
        for namespace in hookspecs:
            self._pm.add_hookspecs(namespace)

        self._load(plugins, discover)

    # ----------------------------------------------------------------------------------
    # construction
    # ----------------------------------------------------------------------------------
    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str],
        plugins: Sequence[Plugin] = (),
        *,
        discover: bool = True,
        hookspecs: Iterable[Any] = (),
        consumer: str = "host",
    ) -> Host:
        """Read ``aalis.toml`` at ``path`` (relative ``data_dir``: the file's folder)."""
        return cls(
            load_config(path), plugins, discover=discover, hookspecs=hookspecs, consumer=consumer
        )

    def _load(self, instances: Sequence[Plugin], discover: bool) -> None:
        explicit: dict[str, Plugin] = {}
        for plugin in instances:
            problem = check_plugin_class(type(plugin))
            if problem is not None:
                raise TypeError(f"plugins=[...] takes Plugin instances: {problem}")
            if plugin.name in explicit:
                raise ValueError(f"two plugin instances are named {plugin.name!r}")
            explicit[plugin.name] = plugin
        disabled = set(self._config.disabled)

        index = 0
        if discover:
            for found in discover_plugins(disabled=disabled):
                if found.name in explicit or found.name in self._entries:
                    continue
                entry = _Entry(found.name, index, found.distribution or "entry point")
                index += 1
                entry.version = found.version
                entry.state = found.state
                entry.error = found.error
                if found.plugin_class is not None:
                    try:
                        entry.plugin = found.plugin_class()
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:  # SystemExit too
                        entry.state = "error"
                        entry.error = f"could not instantiate: {error_text(exc)}"
                self._entries[found.name] = entry
        for name, plugin in explicit.items():
            entry = _Entry(name, index, "in-process")
            index += 1
            entry.plugin = plugin
            entry.version = type(plugin).version
            if name in disabled:
                entry.state = "disabled"
                entry.error = "disabled in [plugins] disabled"
            self._entries[name] = entry

        for entry in self._entries.values():
            if entry.plugin is not None and entry.state == "discovered":
                problem = _declaration_problem(entry.plugin)
                if problem is not None:
                    entry.state = "error"
                    entry.error = problem
                    entry.declared = False

        schemas: dict[str, PluginSchema] = {}
        for name, entry in self._entries.items():
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
        result = validate_plugins(self._config, schemas)  # raises ConfigError
        for name, reason in result.unconfigured.items():
            entry = self._entries[name]
            entry.state = "disabled"
            entry.error = reason
        for name, reason in result.broken.items():
            entry = self._entries[name]
            entry.state = "error"
            entry.error = reason
        self._config_errors = {
            name: ConfigError(problems=problems) for name, problems in result.invalid.items()
        }
        for name, error in self._config_errors.items():
            entry = self._entries[name]
            entry.state = "error"
            entry.error = f"invalid configuration: {error}"
        for name, value in result.configs.items():
            self._entries[name].config = value
        # Failures found before start (import, instantiation, declaration, config class) are
        # logged once here, so they reach the log as start failures do, not only plugins().
        for entry in self._entries.values():
            if entry.state == "error":
                self._plugin_logger(entry.name).error("plugin failed to load", error=entry.error)

        for entry in self._entries.values():
            if entry.state == "discovered" and entry.plugin is not None:
                entry.logger = get_logger(entry.name)
                self._register(entry)

    def _register(self, entry: _Entry) -> None:
        """Register one plugin in pluggy and check its hooks (``check_pending`` for one)."""
        plugin = entry.plugin
        try:
            self._pm.register(plugin, name=entry.name)
        except Exception as exc:
            self._fail(entry, f"invalid hook implementation: {error_text(exc)}")
            return
        for caller in self._pm.get_hookcallers(plugin) or []:
            if caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not impl.optionalhook:
                    self._pm.unregister(plugin)
                    self._fail(
                        entry,
                        f"plugin {entry.name!r} implements hook {caller.name!r}, which no "
                        "loaded contract declares (is the contract installed, is the name "
                        "spelled right?)",
                    )
                    return

    def _fail(self, entry: _Entry, message: str) -> None:
        self._registry.touch()
        entry.state = "error"
        entry.error = redact(message)
        (entry.logger or self._logger).error("plugin failed", plugin=entry.name, error=entry.error)

    # ----------------------------------------------------------------------------------
    # lifecycle
    # ----------------------------------------------------------------------------------
    async def __aenter__(self) -> Host:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start every loadable plugin, providers before consumers.

        Order: topological over ``requires``/``uses`` against declared ``provides``, ties in
        load order (cycles are broken in load order, ``requires`` edges first). A plugin
        whose required capabilities are absent stays ``pending`` and is retried each time
        another plugin comes up. Failures mark the plugin and never raise.
        """
        if self._phase != "new":
            raise RuntimeError(f"host cannot start: it is {self._phase}")
        self._phase = "starting"
        try:
            remaining = [e for e in self._entries.values() if e.state == "discovered"]
            providers: dict[str, set[str]] = {}
            for entry in remaining:
                for cap in entry.provides():
                    providers.setdefault(cap.name, set()).add(entry.name)

            def blockers(entry: _Entry, which: str, waiting: set[str]) -> set[str]:
                names: set[str] = set()
                for cap in entry.capabilities(which).values():
                    names |= providers.get(cap.name, set())
                names.discard(entry.name)
                return names & waiting

            while remaining:
                waiting = {e.name for e in remaining}
                pick = next((e for e in remaining if not blockers(e, "all", waiting)), None)
                if pick is None:
                    pick = next(
                        (e for e in remaining if not blockers(e, "requires", waiting)),
                        remaining[0],
                    )
                remaining.remove(pick)
                await self._attempt(pick)
        finally:
            self._phase = "running"

    def _missing_requirements(self, entry: _Entry) -> list[str]:
        missing: list[str] = []
        for cap in entry.capabilities("requires").values():
            if self._registry.resolve(cap.name, entry.name) is None:
                pinned = self._registry.pin_for(cap.name, entry.name)
                missing.append(cap.name + (f" (pinned to {pinned})" if pinned else ""))
        return missing

    async def _attempt(self, entry: _Entry) -> None:
        missing = self._missing_requirements(entry)
        if missing:
            self._registry.touch()
            entry.state = "pending"
            entry.error = f"waiting for capability {', '.join(missing)}"
            return
        if await self._start_entry(entry):
            await self._retry_pending()

    async def _retry_pending(self) -> None:
        progressed = True
        while progressed:
            progressed = False
            for entry in sorted(self._entries.values(), key=lambda e: e.load_index):
                if entry.state != "pending" or self._missing_requirements(entry):
                    continue
                entry.state = "discovered"
                entry.error = None
                if await self._start_entry(entry):
                    progressed = True
                    break

    def _make_context(self, entry: _Entry) -> PluginContext:
        handles = {
            key: self._registry.handle(cap, entry.name)
            for key, cap in entry.capabilities("all").items()
        }
        assert entry.logger is not None
        return PluginContext(
            name=entry.name,
            config=entry.config,
            logger=entry.logger,
            caps=Caps(entry.name, handles),
            data_dir=self.data_dir,
            host=HostView(self),
            provide=functools.partial(self._provide, entry.name),
        )

    async def _start_entry(self, entry: _Entry) -> bool:
        """Start one plugin; True when it became active."""
        try:
            return await self._start_entry_inner(entry)
        finally:
            # Its state changed whatever happened: a durable provider that failed (or
            # disabled itself) changes what unpinned handles of its capability may bind to.
            self._registry.touch()

    async def _start_entry_inner(self, entry: _Entry) -> bool:
        plugin = entry.plugin
        assert plugin is not None
        entry.ctx = self._make_context(entry)
        entry.start_called = True
        entry.starting = True
        ctx = entry.ctx
        limit = self._config.host.start_timeout
        try:
            await call_plugin(lambda: plugin.start(ctx), limit, name=entry.name)
        except PluginDisabled as exc:
            entry.starting = False
            entry.state = "disabled"
            entry.error = redact(str(exc)) or "disabled by the plugin"
            assert entry.logger is not None
            entry.logger.info("plugin disabled itself", reason=entry.error)
            await self._cleanup_failed_start(entry)
            return False
        except PluginTimeout as exc:
            entry.starting = False
            self._fail(entry, f"start {exc}")
            await self._cleanup_failed_start(entry)
            return False
        except Exception as exc:
            entry.starting = False
            self._fail(entry, f"start failed: {describe(exc)}")
            await self._cleanup_failed_start(entry)
            return False
        entry.starting = False
        entry.state = "active"
        entry.error = None
        self._start_order.append(entry.name)
        assert entry.logger is not None
        entry.logger.debug("plugin started")
        return True

    async def _cleanup_failed_start(self, entry: _Entry) -> None:
        """Withdraw what a failed start provided and run ``stop`` (it may be half-started)."""
        self._registry.withdraw(entry.name)
        plugin = entry.plugin
        assert plugin is not None
        try:
            await call_plugin(plugin.stop, self._config.host.stop_timeout, name=entry.name)
        except Exception as exc:
            message = f"stop after failed start failed: {_stop_text(exc)}"
            entry.error = f"{entry.error}; {message}" if entry.error else message
            assert entry.logger is not None
            entry.logger.error("plugin stop failed", error=message)

    async def stop(self) -> None:
        """Stop active plugins in reverse start order; idempotent, never raises for a plugin."""
        if self._phase in ("new", "stopped", "stopping"):
            return
        self._phase = "stopping"
        try:
            await self._hooks.finish_deliveries(self._config.host.stop_timeout)
            for name in reversed(self._start_order):
                entry = self._entries[name]
                if entry.state == "active":
                    await self._stop_entry(entry)
        finally:
            self._phase = "stopped"

    async def stop_plugin(self, name: str) -> None:
        """Stop one active plugin now (its providers leave; consumers' handles follow).

        Consumers keep running: unpinned handles move to the next provider, pinned ones
        become absent, and ``use`` proxies kept from it raise ``CapabilityAbsent``.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise ValueError(f"no plugin named {name!r}")
        if entry.state != "active":
            raise ValueError(f"plugin {name!r} is not active (state {entry.state})")
        await self._stop_entry(entry)

    async def _stop_entry(self, entry: _Entry) -> None:
        self._registry.withdraw(entry.name)
        plugin = entry.plugin
        assert plugin is not None
        assert entry.logger is not None
        try:
            await call_plugin(plugin.stop, self._config.host.stop_timeout, name=entry.name)
        except Exception as exc:
            self._fail(entry, f"stop failed: {_stop_text(exc)}")
            return
        entry.state = "stopped"
        self._registry.touch()
        entry.logger.debug("plugin stopped")

    # ----------------------------------------------------------------------------------
    # capabilities
    # ----------------------------------------------------------------------------------
    @property
    def config(self) -> HostConfig:
        """The validated configuration."""
        return self._config

    @property
    def data_dir(self) -> Path:
        """Where plugins keep data (``[host] data_dir``, resolved; not created by the host)."""
        return self._config.data_dir

    def capability(
        self, cap: Capability[T], consumer: str | None = None, *, provider: str | None = None
    ) -> Handle[T]:
        """A handle on ``cap`` for ``consumer``.

        ``consumer`` defaults to the host's ``default_consumer``: ``host``, or ``cli`` for a
        host opened by ``aalis_core.cli.open_host``. The consumer's pins from
        ``[consumers.<consumer>]`` and ``[capabilities.<cap>]`` apply; ``provider=`` pins this
        handle explicitly (``aalis migrate --to X``), with the same no-fallback rule.
        """
        if not isinstance(cap, Capability):
            raise TypeError(f"expected a Capability, got {cap!r}")
        return self._registry.handle(cap, consumer or self.default_consumer, provider)

    def _provide(self, plugin: str, cap: Capability[Any], instance: object, priority: int) -> None:
        entry = self._entries.get(plugin)
        if entry is None or entry.plugin is None:
            raise ValueError(f"unknown plugin {plugin!r}")
        if not isinstance(cap, Capability):
            raise TypeError(f"provide() expects a Capability, got {cap!r}")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"priority must be an int, got {priority!r}")
        if not any(c is cap or c.name == cap.name for c in entry.provides()):
            raise ValueError(
                f"plugin {plugin!r} provides {cap.name!r} without declaring it in `provides`"
            )
        if not (entry.starting or entry.state == "active"):
            raise RuntimeError(f"plugin {plugin!r} can only provide while starting or active")
        if any(r.plugin == plugin for r in self._registry.records(cap.name)):
            raise ValueError(f"plugin {plugin!r} already provides {cap.name!r}")
        wrapped = cap.adapter(instance) if cap.adapter is not None else instance
        volatile = bool(getattr(entry.plugin, "volatile", False))
        self._registry.add(
            ProviderRecord(cap, plugin, wrapped, priority, entry.load_index, volatile)
        )
        assert entry.logger is not None
        entry.logger.debug("capability provided", capability=cap.name, priority=priority)

    def _durable_declarers(self, capability: str) -> list[DurableDeclarer]:
        """Loaded, not disabled, non-volatile plugins declaring ``capability`` in ``provides``.

        Their presence is what keeps a volatile provider off unpinned handles: a durable
        store that is installed but broken must make the capability absent, loudly, rather
        than let the conversation go into RAM.
        """
        found: list[DurableDeclarer] = []
        for entry in sorted(self._entries.values(), key=lambda e: e.load_index):
            plugin = entry.plugin
            if plugin is None or not entry.declared or entry.state == "disabled":
                continue
            if getattr(plugin, "volatile", False) is not False:
                continue
            if not any(c.name == capability for c in entry.provides()):
                continue
            found.append(
                DurableDeclarer(entry.name, entry.state == "active", entry.state, entry.error)
            )
        return found

    def consumer_bindings(self, consumer: str) -> dict[str, str | None]:
        """What ``consumer`` (``cli``, ``host``, or a plugin) is bound to, per capability
        that some loaded plugin provides or consumes (None: absent)."""
        names: dict[str, None] = {}
        for entry in sorted(self._entries.values(), key=lambda e: e.load_index):
            for cap in [*entry.provides(), *entry.capabilities("all").values()]:
                names.setdefault(cap.name, None)
        bindings: dict[str, str | None] = {}
        for name in names:
            record = self._registry.resolve(name, consumer)
            bindings[name] = record.plugin if record is not None else None
        return bindings

    def absence_reason(self, cap: Capability[Any] | str, consumer: str | None = None) -> str:
        """Why ``consumer``'s handle on ``cap`` is absent (the text ``CapabilityAbsent`` carries)."""
        name = cap if isinstance(cap, str) else cap.name
        return self._registry.absence_reason(name, consumer or self.default_consumer)

    def providers(self, cap: Capability[Any] | str) -> list[str]:
        """Active providers of a capability, best first (priority, then load order)."""
        name = cap if isinstance(cap, str) else cap.name
        records = sorted(self._registry.records(name), key=ProviderRecord.rank, reverse=True)
        return [r.plugin for r in records]

    def plugins(self) -> list[PluginInfo]:
        """Every known plugin in load order, with state, error, provides and bindings."""
        infos: list[PluginInfo] = []
        for entry in sorted(self._entries.values(), key=lambda e: e.load_index):
            bindings: dict[str, str | None] = {}
            for cap in entry.capabilities("all").values():
                record = self._registry.resolve(cap.name, entry.name)
                bindings[cap.name] = record.plugin if record is not None else None
            state: PluginState = entry.state
            infos.append(
                PluginInfo(
                    name=entry.name,
                    version=entry.version,
                    state=state,
                    error=entry.error,
                    provides=[c.name for c in entry.provides()],
                    bindings=bindings,
                    label=_label(entry.plugin),
                )
            )
        return infos

    def config_errors(self) -> dict[str, ConfigError]:
        """The plugins whose ``[plugins.<name>]`` table is invalid, with its problems.

        Such a plugin is in ``error`` and the rest runs; a host that would rather not start
        at all can ``raise`` one of these (they name file, table and key).
        """
        return dict(self._config_errors)

    def plugin(self, name: str) -> Plugin | None:
        """The plugin instance registered under ``name`` (None if unknown or not loaded)."""
        entry = self._entries.get(name)
        return entry.plugin if entry is not None else None

    # ----------------------------------------------------------------------------------
    # hooks
    # ----------------------------------------------------------------------------------
    def _active_order(self) -> list[str]:
        """Active plugins in start order: whose hook implementations run, and in what order."""
        return [n for n in self._start_order if self._entries[n].state == "active"]

    def hook_impls(self, hook: str) -> list[tuple[str, Callable[..., Any]]]:
        """Implementations of ``hook`` by active plugins: tryfirst, normal, trylast, each
        group in plugin start order. Raises ``ValueError`` for an undeclared hook."""
        return self._hooks.hook_impls(hook)

    def _plugin_logger(self, name: str) -> FilteringBoundLogger:
        entry = self._entries.get(name)
        if entry is not None and entry.logger is not None:
            return entry.logger
        return get_logger(name)

    async def emit(self, event: str, **payload: object) -> None:
        """Call every implementation of ``event`` (sync or async) in order.

        An implementation that raises (``SystemExit`` included) or runs past ``[host]
        hook_timeout`` is logged with its plugin's name; the others still run and the
        emitter never sees the error. The emitter waits at most ``hook_timeout`` for the
        whole delivery: what is still running then goes on in the background and ``stop``
        waits for it (up to ``stop_timeout``). Raises ``ValueError`` for an event no hookspec
        declares and ``TypeError`` for a payload that does not match the spec.
        """
        await self.emit_each(event, [payload])

    async def emit_each(self, event: str, payloads: Iterable[Mapping[str, object]]) -> None:
        """``emit(event, **payload)`` for each payload in order, within ONE wait.

        For an emitter that announces many things at once (a clear of every session emits
        ``history_changed`` per session): it waits at most ``hook_timeout`` for all of
        them together, not once per payload. Every payload is checked before any listener
        runs.
        """
        await self._hooks.emit_each(event, payloads)

    async def run_middleware(
        self,
        hook: str,
        request: object,
        default: Callable[[], object],
        on_error: Callable[[str, BaseException], object],
    ) -> None:
        """Run ``hook`` as a Koa-style onion around ``default``.

        Each implementation is called as ``impl(request, call_next)`` (by the hookspec's
        argument names); code before ``await call_next()`` runs on the way in, after it on
        the way out. Skipping ``call_next`` short-circuits. Calling it twice raises
        ``RuntimeError`` in that implementation. An implementation that raises, runs past
        ``[host] hook_timeout`` (its own time; the time below its ``call_next()`` is not
        counted) or calls ``call_next()`` without awaiting it is reported to
        ``on_error(plugin_name, exc)`` (``str(exc)`` says what happened, e.g. "timed out
        after 30 s"); if it had not run ``call_next`` yet, the runner calls the rest of the
        chain on its behalf, otherwise the chain unwinds.
        ``call_next()`` never raises for the chain below it: an exception from ``default``
        is re-raised by ``run_middleware`` once every layer has unwound.
        """
        await self._hooks.run_middleware(hook, request, default, on_error)

    def collect_contributions(self, hook: str) -> list[tuple[str, Any]]:
        """Collect sync contributions of ``hook`` from active plugins, in hook order.

        Each item must have an ``id`` that is a non-empty string without ``/``; invalid
        items are dropped and logged with the plugin's name. The first item per id wins
        (so the first label in collection order names a shared type).
        """
        return self._hooks.collect_contributions(hook)

    def __repr__(self) -> str:
        return f"<Host {self._config.source} {self._phase}, {len(self._entries)} plugins>"


__all__ = ["ConfigError", "Host", "PluginInfo", "PluginState"]
