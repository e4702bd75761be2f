"""Calling hook implementations: events, the middleware onion, contributions.

``HookRunner`` is everything the host does with hooks once plugins are registered: it picks
the implementations of active plugins in hook order (``tryfirst``, normal, ``trylast``; within
a group the plugins' start order), checks event payloads against the hookspec, and calls them.
The host keeps the lifecycle (which plugins are active, in what order they started) and hands
the runner a view of it; ``Host.emit``, ``run_middleware``, ``collect_contributions`` and
``hook_impls`` delegate here.

Every call goes through ``aalis_core.containment.call_plugin``, so a middleware or a
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
from typing import TYPE_CHECKING, Any, cast

import pluggy

from aalis_core.containment import Budget, PluginTimeout, call_plugin, describe, format_seconds
from aalis_core.discovery import error_text
from aalis_core.errors import AalisError

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

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


class HookRunner:
    """Calls the hook implementations of a host's active plugins (see the module docstring).

    ``active_order()`` returns the names of the active plugins in start order (the host's
    lifecycle owns it); only their implementations run. ``limit`` is ``[host] hook_timeout``,
    ``logger_for(plugin)`` the logger a failure is reported on, ``logger`` the host's own.
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        *,
        active_order: Callable[[], Sequence[str]],
        limit: float,
        logger_for: LoggerFor,
        logger: FilteringBoundLogger,
    ) -> None:
        self._pm = pm
        self._active_order = active_order
        self._limit = limit
        self._logger_for = logger_for
        self._logger = logger
        #: event deliveries still running after their emitter stopped waiting
        self._deliveries: set[asyncio.Task[None]] = set()

    def caller(self, hook: str) -> pluggy.HookCaller:
        """The pluggy caller of ``hook``; ``ValueError`` when no loaded hookspec declares it."""
        caller: pluggy.HookCaller | None = getattr(self._pm.hook, hook, None)
        if caller is None or not caller.has_spec():
            raise ValueError(f"unknown hook {hook!r}: no loaded hookspec declares it")
        return caller

    def ordered_impls(self, hook: str) -> list[tuple[str, pluggy.HookImpl]]:
        """Implementations of active plugins: tryfirst, normal, trylast, each in start order."""
        caller = self.caller(hook)
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
        """``(plugin name, function)`` of ``ordered_impls``."""
        return [(name, impl.function) for name, impl in self.ordered_impls(hook)]

    async def emit_each(self, event: str, payloads: Iterable[Mapping[str, object]]) -> None:
        """Deliver each payload of ``event`` in order, waiting at most ``limit`` in all.

        Every payload is checked against the hookspec before any listener runs
        (``TypeError``). What is still running when the wait ends goes on in the background;
        ``finish_deliveries`` waits for it at stop.
        """
        caller = self.caller(event)
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
        impls = self.ordered_impls(event)
        if not impls or not checked:
            return
        limit = self._limit

        async def deliver_all() -> None:
            for payload in checked:
                await deliver(event, impls, payload, limit, self._logger_for)

        delivery = asyncio.get_running_loop().create_task(deliver_all())
        self._deliveries.add(delivery)
        delivery.add_done_callback(self._deliveries.discard)
        done, _ = await asyncio.wait({delivery}, timeout=limit)
        if not done:
            self._logger.warning(
                "event listeners still running; the emitter goes on",
                hook=event,
                after=format_seconds(limit),
            )

    async def finish_deliveries(self, within: float) -> None:
        """Let event deliveries still running end (up to ``within`` s), then cancel them."""
        if not self._deliveries:
            return
        pending = set(self._deliveries)
        _, late = await asyncio.wait(pending, timeout=within)
        for task in late:
            task.cancel()
        if late:
            self._logger.warning("event deliveries cancelled at stop", count=len(late))
            await asyncio.wait(late, timeout=1.0)

    async def run_middleware(
        self,
        hook: str,
        request: object,
        default: Callable[[], object],
        on_error: Callable[[str, BaseException], object],
    ) -> None:
        """Run ``hook`` as an onion around ``default`` (``Host.run_middleware`` documents it)."""
        caller = self.caller(hook)
        assert caller.spec is not None
        names = list(caller.spec.argnames)
        if len(names) != 2:
            raise ValueError(
                f"hook {hook!r} is not a middleware hook: its spec takes {names}, "
                "expected (request, call_next)"
            )
        impls = self.ordered_impls(hook)

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
        """Sync contributions of ``hook``, first item per ``id`` wins (``Host`` documents it)."""
        self.caller(hook)
        seen: set[str] = set()
        collected: list[tuple[str, Any]] = []
        for name, impl in self.ordered_impls(hook):
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


__all__ = ["CallNextNotAwaited", "HookRunner", "Impls", "deliver", "run_onion"]
