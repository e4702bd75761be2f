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
  are called lives in ``aalis_core._hook_runner``; how plugins are found, checked, configured
  and registered in ``aalis_core._loading`` (``Host._load`` runs its steps); this module keeps
  the lifecycle (start in dependency order, stop) and the capability registry's bookkeeping.
- **Plugins see the host through ``HostServices``** (``aalis_core._host_services``): a
  plugin's ``ctx.host`` is ``host.hooks``, the hook runner, which has the operations a plugin
  needs at run time and nothing of the lifecycle. ``host.emit`` and the other hook methods
  of ``Host`` are that runner's methods (one implementation, one door).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from aalis_core._capability import Capability
from aalis_core._config import (
    ConfigError,
    HostConfig,
    default_config,
    load_config,
    parse_config,
)
from aalis_core._containment import PluginTimeout, call_plugin, describe
from aalis_core._context import Caps, PluginContext
from aalis_core._discovery import error_text
from aalis_core._handles import CapabilityRegistry, DurableDeclarer, Handle, ProviderRecord
from aalis_core._hook_manager import HookManager
from aalis_core._hook_runner import Deliveries, HookDoor, HookRunner
from aalis_core._loading import (
    PluginEntry,
    PluginState,
    apply_config,
    check_declarations,
    check_instances,
    discovered_entries,
    hook_problem,
    instance_entries,
    load_hookspecs,
)
from aalis_core._logging import configure_logging, get_logger, redact
from aalis_core._markers import PROJECT_NAME
from aalis_core._plugin import Plugin, PluginDisabled
from aalis_core._plugin_info import PluginInfo, plugin_infos

if TYPE_CHECKING:
    import click
    from structlog.typing import FilteringBoundLogger

T = TypeVar("T")


_Phase = Literal["new", "starting", "running", "stopping", "stopped"]


def _stop_text(exc: BaseException) -> str:
    """``timed out after 10 s; abandoned`` for a time-out, the error text otherwise."""
    if isinstance(exc, PluginTimeout):
        return f"{exc}; abandoned"
    return describe(exc)


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
        self._pm = HookManager(PROJECT_NAME)
        self._entries: dict[str, PluginEntry] = {}
        self._start_order: list[str] = []
        self._phase: _Phase = "new"
        #: plugin name -> the problems of its ``[plugins.<name>]`` table (plugin in ``error``)
        self._config_errors: dict[str, ConfigError] = {}
        self._deliveries = Deliveries(self._logger)
        self._hooks = HookRunner(
            self._pm,
            active_order=self._active_order,
            capability=self.capability,
            limit=parsed.host.hook_timeout,
            logger_for=self._plugin_logger,
            logger=self._logger,
            deliveries=self._deliveries,
        )
        #: hookspec entry points that failed to import: (entry-point name, message)
        self.hookspec_errors: list[tuple[str, str]] = load_hookspecs(
            self._pm, hookspecs, self._logger
        )
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
        """Construction's steps, in order (``aalis_core._loading`` documents each)."""
        explicit = check_instances(instances)
        disabled = set(self._config.disabled)
        found = discovered_entries(explicit, disabled) if discover else []
        entries = [*found, *instance_entries(explicit, disabled, len(found))]
        self._entries = {entry.name: entry for entry in entries}
        check_declarations(entries)
        self._config_errors = apply_config(self._config, self._entries)  # raises ConfigError
        self._log_load_failures()
        self._register_hooks()

    def _log_load_failures(self) -> None:
        """Log failures found before start (import, instantiation, declaration, config), once,
        so they reach the log as start failures do, not only ``plugins()``."""
        for entry in self._entries.values():
            if entry.state == "error":
                self._plugin_logger(entry.name).error("plugin failed to load", error=entry.error)

    def _register_hooks(self) -> None:
        """Register every loadable plugin in pluggy; a bad hookimpl fails that plugin."""
        for entry in self._entries.values():
            if entry.state == "discovered" and entry.plugin is not None:
                entry.logger = get_logger(entry.name)
                problem = hook_problem(self._pm, entry)
                if problem is not None:
                    self._fail(entry, problem)

    def _fail(self, entry: PluginEntry, message: str) -> None:
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

            def blockers(entry: PluginEntry, which: str, waiting: set[str]) -> set[str]:
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

    def _missing_requirements(self, entry: PluginEntry) -> list[str]:
        missing: list[str] = []
        for cap in entry.capabilities("requires").values():
            if self._registry.resolve(cap.name, entry.name) is None:
                pinned = self._registry.pin_for(cap.name, entry.name)
                missing.append(cap.name + (f" (pinned to {pinned})" if pinned else ""))
        return missing

    async def _attempt(self, entry: PluginEntry) -> None:
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

    def _make_context(self, entry: PluginEntry) -> PluginContext:
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
            host=self._hooks,
            provide=functools.partial(self._provide, entry.name),
        )

    async def _start_entry(self, entry: PluginEntry) -> bool:
        """Start one plugin; True when it became active."""
        try:
            return await self._start_entry_inner(entry)
        finally:
            # Its state changed whatever happened: a durable provider that failed (or
            # disabled itself) changes what unpinned handles of its capability may bind to.
            self._registry.touch()

    async def _start_entry_inner(self, entry: PluginEntry) -> bool:
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

    async def _cleanup_failed_start(self, entry: PluginEntry) -> None:
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
            await self._deliveries.finish(self._config.host.stop_timeout)
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

    async def _stop_entry(self, entry: PluginEntry) -> None:
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
        host opened by ``aalis_core._cli.open_host``. The consumer's pins from
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
        return plugin_infos(self._entries.values(), self._registry)

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

    def _plugin_logger(self, name: str) -> FilteringBoundLogger:
        entry = self._entries.get(name)
        if entry is not None and entry.logger is not None:
            return entry.logger
        return get_logger(name)

    @property
    def hooks(self) -> HookRunner:
        """The hook runner: events, hook implementations, middleware, contributions.

        The one implementation of the run-time services (``HostServices``); a plugin's
        ``ctx.host`` is this object. ``host.emit`` and the other hook methods below are its
        methods, reached through the host for convenience.
        """
        return self._hooks

    emit = HookDoor(HookRunner.emit)
    emit_each = HookDoor(HookRunner.emit_each)
    hook_impls = HookDoor(HookRunner.hook_impls)
    run_middleware = HookDoor(HookRunner.run_middleware)
    collect_contributions = HookDoor(HookRunner.collect_contributions)

    def add_commands(self, group: click.Group) -> list[str]:
        """Call ``register_commands(cli=group)`` on every loaded plugin, without starting any.

        How the ``aalis`` CLI gets plugins' commands: the same discovery, ``[plugins]
        disabled``, ``AALIS_LOAD_PLUGINS`` and configuration as the host that will run the
        command. Plugins in load order; one whose hook raises (``SystemExit`` too) is logged
        and skipped. Returns the names of the plugins that registered commands.
        """
        rank = {name: entry.load_index for name, entry in self._entries.items()}
        impls = sorted(
            self._pm.hook.register_commands.get_hookimpls(),
            key=lambda impl: rank.get(impl.plugin_name, len(rank)),
        )
        registered: list[str] = []
        for impl in impls:
            try:
                impl.function(*[group for _ in impl.argnames])
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit too: one plugin never ends the CLI
                self._plugin_logger(impl.plugin_name).warning(
                    "register_commands failed", error=error_text(exc)
                )
                continue
            registered.append(impl.plugin_name)
        return registered

    def __repr__(self) -> str:
        return f"<Host {self._config.source} {self._phase}, {len(self._entries)} plugins>"


__all__ = ["ConfigError", "Host", "PluginInfo", "PluginState"]
