"""Calling hook implementations: the middleware onion and in-order event delivery.

The host decides *which* implementations run and in what order (``Host._ordered_impls``);
this module decides *how* each one is called: every call goes through
``aalis_core.containment.call_plugin``, so a middleware or a listener that hangs is
cancelled after ``[host] hook_timeout`` and one that raises (``SystemExit`` included) is
reported with its plugin's name, and the chain or the delivery goes on.

Middleware (a Koa-style onion): code before ``await call_next()`` runs on the way in, after
it on the way out, the default action in the middle. A layer that fails (raises or times
out) is reported; if it had not reached ``call_next`` yet the runner calls the rest of the
chain on its behalf, otherwise the chain unwinds. A layer that *called* ``call_next()`` but
never awaited it (a missing ``await``) is reported the same way and the rest of the chain
runs: it asked for the chain to go on, and leaving the history uncleared without a word is
the worst outcome. Skipping ``call_next`` altogether is a deliberate short-circuit.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from aalis_core.containment import Budget, PluginTimeout, call_plugin, describe
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
    request: Any,
    default: Callable[[], Awaitable[Any] | Any],
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
        pending: Coroutine[Any, Any, None] | None = None

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


def _bind(impl: pluggy.HookImpl, payload: Mapping[str, Any]) -> Callable[[], Any]:
    arguments = [payload[a] for a in impl.argnames]
    function = impl.function
    return lambda: function(*arguments)


def _discard(coro: Coroutine[Any, Any, None] | None) -> None:
    """Close a ``call_next()`` coroutine that never ran (no "never awaited" warning)."""
    if coro is not None and inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
        coro.close()


async def deliver(
    event: str,
    impls: Impls,
    payload: Mapping[str, Any],
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


__all__ = ["CallNextNotAwaited", "Impls", "deliver", "run_onion"]
