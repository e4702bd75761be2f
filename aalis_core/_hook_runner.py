"""Calling hook implementations: events, the middleware onion, contributions.

``HookRunner`` is everything the host does with hooks once plugins are registered: it picks
the implementations of active plugins in hook order (``tryfirst``, normal, ``trylast``; within
a group the plugins' start order), checks event payloads against the hookspec, and calls them.
The host keeps the lifecycle (which plugins are active, in what order they started) and hands
the runner a view of it. The runner is ``host.hooks`` and what a plugin's ``ctx.host`` is: the
one implementation of the host's run-time services (``HostServices``); ``Host.emit`` and the
other hook methods of ``Host`` are this object's methods (docs/host.md).

Every call goes through ``aalis_core._containment.call_plugin``, so a middleware or a
listener that hangs is cancelled after ``[host] hook_timeout`` and one that raises
(``SystemExit`` included) is reported with its plugin's name, and the chain or the delivery
goes on.

Middleware (a Koa-style onion): code before ``await call_next()`` runs on the way in, after
it on the way out, the default action in the middle. A layer that fails (raises or times
out) is reported; if it had not reached ``call_next`` yet the runner calls the rest of the
chain on its behalf, otherwise the chain unwinds. A layer that *called* ``call_next()`` but
never awaited it (a missing ``await``) is reported the same way and the rest of the chain
runs: it asked for the chain to go on, and leaving the history uncleared without a word is
the worst outcome. Skipping ``call_next`` altogether is a deliberate short-circuit.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

import pluggy

from aalis_core._containment import Budget, PluginTimeout, call_plugin, describe, format_seconds
from aalis_core._discovery import error_text
from aalis_core._errors import AalisError

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from aalis_core._capability import Capability
    from aalis_core._handles import Handle

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")

Impls = Sequence[tuple[str, pluggy.HookImpl]]
LoggerFor = Callable[[str], "FilteringBoundLogger"]


class CallNextNotAwaited(AalisError, RuntimeError):
    """A middleware called ``call_next()`` and dropped the coroutine without awaiting it."""


async def run_onion(
    hook: str,
    impls: Impls,
    argnames: Sequence[str],
    request: object,
    default: Callable[[], object],
    report: Callable[[str, BaseException], Awaitable[None]],
    limit: float,
) -> None:
    """Run ``impls`` as an onion around ``default``; see the module docstring.

    ``argnames`` are the hookspec's two argument names (request, call_next). ``report`` is
    awaited with ``(plugin name, exception)`` for every failing layer. An exception from
    ``default`` is re-raised once every layer has unwound (``call_next()`` never raises for
    the chain below it).
    """
    default_errors: list[BaseException] = []

    async def dispatch(index: int) -> None:
        if index >= len(impls):
            try:
                outcome = default()
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                default_errors.append(exc)
            return
        name, impl = impls[index]
        budget = Budget(limit)
        called = False
        started = False
        pending: Coroutine[object, object, None] | None = None

        async def run_rest() -> None:
            nonlocal started
            started = True
            budget.pause()
            try:
                await dispatch(index + 1)
            finally:
                budget.resume()

        def call_next() -> Awaitable[None]:
            nonlocal called, pending
            if called:
                raise RuntimeError(
                    f"call_next() called twice in {hook!r} middleware of plugin {name!r}"
                )
            called = True
            pending = run_rest()
            return pending

        values = {argnames[0]: request, argnames[1]: call_next}
        arguments = [values[a] for a in impl.argnames]
        function = impl.function
        try:
            await call_plugin(lambda: function(*arguments), limit, budget=budget, name=name)
        except Exception as exc:
            await report(name, exc)
            if not started:
                _discard(pending)
                await dispatch(index + 1)
            return
        if called and not started:
            _discard(pending)
            await report(
                name,
                CallNextNotAwaited(
                    "called call_next() without awaiting it; the rest of the chain ran for it"
                ),
            )
            await dispatch(index + 1)

    await dispatch(0)
    if default_errors:
        raise default_errors[0]


def _bind(impl: pluggy.HookImpl, payload: Mapping[str, object]) -> Callable[[], object]:
    arguments = [payload[a] for a in impl.argnames]
    function = impl.function
    return lambda: function(*arguments)


def _discard(coro: Coroutine[object, object, None] | None) -> None:
    """Close a ``call_next()`` coroutine that never ran (no "never awaited" warning)."""
    if coro is not None and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
        coro.close()


async def deliver(
    event: str,
    impls: Impls,
    payload: Mapping[str, object],
    limit: float,
    logger_for: LoggerFor,
) -> None:
    """Call every listener of ``event`` in order, each within ``limit`` seconds; never raises.

    A listener that raises or times out is logged with its plugin's name (``event handler
    failed``) and the next one runs.
    """
    for name, impl in impls:
        try:
            await call_plugin(_bind(impl, payload), limit, name=name)
        except Exception as exc:
            logger_for(name).error(
                "event handler failed",
                hook=event,
                error=describe(exc),
                exc_info=None if isinstance(exc, PluginTimeout) else exc,
            )


class Deliveries:
    """Event deliveries still running after their emitter stopped waiting.

    The runner adds to it; the host, at stop, lets them end (``finish``). Kept apart from
    the runner so ``ctx.host`` (the runner) offers a plugin nothing of the host's stop.
    """

    def __init__(self, logger: FilteringBoundLogger) -> None:
        self._logger = logger
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self, within: float) -> None:
        """Let deliveries still running end (up to ``within`` s), then cancel them."""
        if not self._tasks:
            return
        pending = set(self._tasks)
        _, late = await asyncio.wait(pending, timeout=within)
        for task in late:
            task.cancel()
        if late:
            self._logger.warning("event deliveries cancelled at stop", count=len(late))
            await asyncio.wait(late, timeout=1.0)


class HookRunner:
    """``host.hooks``: the run-time services of one host (``HostServices``), and only those.

    It is what ``ctx.host`` is for a plugin and what ``Host.emit``, ``emit_each``,
    ``hook_impls``, ``run_middleware`` and ``collect_contributions`` are: one implementation,
    reached through one door. It has no lifecycle (no start, stop, ``stop_plugin``), so a
    plugin holding it cannot stop another plugin or the host, type checker or not.

    ``active_order()`` returns the names of the active plugins in start order (the host's
    lifecycle owns it); only their implementations run. ``capability`` is the host's handle
    factory (``Host.capability``). ``limit`` is ``[host] hook_timeout``, ``logger_for(plugin)``
    the logger a failure is reported on, ``logger`` the host's own; event deliveries still
    running when their emitter stops waiting go to ``deliveries``.
    """

    __slots__ = (
        "_active_order",
        "_capability",
        "_deliveries",
        "_limit",
        "_logger",
        "_logger_for",
        "_pm",
    )

    def __init__(
        self,
        pm: pluggy.PluginManager,
        *,
        active_order: Callable[[], Sequence[str]],
        capability: Callable[..., Handle[Any]],
        limit: float,
        logger_for: LoggerFor,
        logger: FilteringBoundLogger,
        deliveries: Deliveries,
    ) -> None:
        self._pm = pm
        self._active_order = active_order
        self._capability = capability
        self._limit = limit
        self._logger_for = logger_for
        self._logger = logger
        self._deliveries = deliveries

    def capability(
        self, cap: Capability[T], consumer: str | None = None, *, provider: str | None = None
    ) -> Handle[T]:
        """A handle on ``cap`` for ``consumer`` (``Host.capability``; a plugin passes its name).

        For a capability the plugin does not declare in ``uses``/``requires`` (found by name
        at run time, e.g. ``recall`` when its contract may be absent).
        """
        handle: Handle[T] = self._capability(cap, consumer, provider=provider)
        return handle

    def _caller(self, hook: str) -> pluggy.HookCaller:
        """The pluggy caller of ``hook``; ``ValueError`` when no loaded hookspec declares it."""
        caller: pluggy.HookCaller | None = getattr(self._pm.hook, hook, None)
        if caller is None or not caller.has_spec():
            raise ValueError(f"unknown hook {hook!r}: no loaded hookspec declares it")
        return caller

    def _ordered_impls(self, hook: str) -> list[tuple[str, pluggy.HookImpl]]:
        """Implementations of active plugins: tryfirst, normal, trylast, each in start order."""
        caller = self._caller(hook)
        rank = {name: i for i, name in enumerate(self._active_order())}
        impls: list[tuple[int, int, str, pluggy.HookImpl]] = []
        for impl in caller.get_hookimpls():
            if impl.wrapper or impl.hookwrapper:
                continue
            if impl.plugin_name not in rank:
                continue
            group = 0 if impl.tryfirst else 2 if impl.trylast else 1
            impls.append((group, rank[impl.plugin_name], impl.plugin_name, impl))
        impls.sort(key=lambda item: (item[0], item[1]))
        return [(name, impl) for _, _, name, impl in impls]

    def hook_impls(self, hook: str) -> list[tuple[str, Callable[..., Any]]]:
        """Implementations of ``hook`` by active plugins: tryfirst, normal, trylast, each
        group in plugin start order. Raises ``ValueError`` for an undeclared hook."""
        return [(name, impl.function) for name, impl in self._ordered_impls(hook)]

    async def emit(self, /, event: str, **payload: object) -> None:
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
        them together, not once per payload. Every payload is checked against the hookspec
        before any listener runs (``TypeError``).
        """
        caller = self._caller(event)
        spec = caller.spec
        assert spec is not None
        allowed = set(spec.argnames) | set(spec.kwargnames)
        checked: list[Mapping[str, object]] = []
        for payload in payloads:
            missing = [a for a in spec.argnames if a not in payload]
            extra = [k for k in payload if k not in allowed]
            if missing or extra:
                parts = []
                if missing:
                    parts.append(f"missing {', '.join(missing)}")
                if extra:
                    parts.append(f"unexpected {', '.join(extra)}")
                raise TypeError(f"event {event!r} payload: {'; '.join(parts)}")
            checked.append(dict(payload))
        impls = self._ordered_impls(event)
        if not impls or not checked:
            return
        limit = self._limit

        async def deliver_all() -> None:
            for payload in checked:
                await deliver(event, impls, payload, limit, self._logger_for)

        delivery = asyncio.get_running_loop().create_task(deliver_all())
        self._deliveries.add(delivery)
        done, _ = await asyncio.wait({delivery}, timeout=limit)
        if not done:
            self._logger.warning(
                "event listeners still running; the emitter goes on",
                hook=event,
                after=format_seconds(limit),
            )

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
        caller = self._caller(hook)
        assert caller.spec is not None
        names = list(caller.spec.argnames)
        if len(names) != 2:
            raise ValueError(
                f"hook {hook!r} is not a middleware hook: its spec takes {names}, "
                "expected (request, call_next)"
            )
        impls = self._ordered_impls(hook)

        async def report(name: str, exc: BaseException) -> None:
            self._logger_for(name).warning(
                "middleware failed",
                hook=hook,
                error=describe(exc),
                exc_info=None if isinstance(exc, PluginTimeout | CallNextNotAwaited) else exc,
            )
            try:
                outcome = on_error(name, exc)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as inner:
                self._logger.error(
                    "on_error callback failed", hook=hook, error=error_text(inner), exc_info=inner
                )

        await run_onion(hook, impls, names, request, default, report, self._limit)

    def collect_contributions(self, hook: str) -> list[tuple[str, Any]]:
        """Collect sync contributions of ``hook`` from active plugins, in hook order.

        Each item must have an ``id`` that is a non-empty string without ``/``; invalid
        items are dropped and logged with the plugin's name. The first item per id wins
        (so the first label in collection order names a shared type).
        """
        self._caller(hook)
        seen: set[str] = set()
        collected: list[tuple[str, Any]] = []
        for name, impl in self._ordered_impls(hook):
            logger = self._logger_for(name)
            try:
                result = impl.function(*[None for _ in impl.argnames])
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit too: plugin code never ends the host
                logger.error(
                    "contribution hook failed", hook=hook, error=error_text(exc), exc_info=exc
                )
                continue
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                logger.error("contribution hook must be synchronous", hook=hook)
                continue
            if result is None:
                continue
            try:
                items = list(cast("Iterable[object]", result))  # list() itself checks
            except TypeError:
                logger.error(
                    "contribution hook returned a non-list",
                    hook=hook,
                    returned=type(result).__name__,
                )
                continue
            for item in items:
                item_id = getattr(item, "id", None)
                if not isinstance(item_id, str) or not item_id or "/" in item_id:
                    logger.warning(
                        "invalid contribution dropped",
                        hook=hook,
                        id=repr(item_id),
                        expected="a non-empty string without '/'",
                    )
                    continue
                if item_id in seen:
                    continue
                seen.add(item_id)
                collected.append((name, item))
        return collected


class HookDoor(Generic[P, R]):
    """A ``Host`` method that *is* ``host.hooks``'s: ``host.emit`` is ``host.hooks.emit``.

    The host does not re-declare (and re-document) the services the runner implements; it
    names them once, and reading ``host.emit`` returns the runner's bound method. On the
    class (``Host.emit``) it is the runner's function, so ``help`` and ``inspect`` show the
    runner's signature and docstring.
    """

    def __init__(self, method: Callable[Concatenate[HookRunner, P], R]) -> None:
        self._method = method
        self._name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[Concatenate[HookRunner, P], R]: ...

    @overload
    def __get__(self, obj: object, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, obj: object, owner: type[Any]) -> Callable[..., R]:
        if obj is None:
            return self._method
        runner: HookRunner = obj.hooks  # type: ignore[attr-defined]
        bound: Callable[P, R] = getattr(runner, self._name)
        return bound


__all__ = [
    "CallNextNotAwaited",
    "Deliveries",
    "HookDoor",
    "HookRunner",
    "Impls",
    "deliver",
    "run_onion",
]
