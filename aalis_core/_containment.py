"""Running plugin code so that it can neither hang the host nor end the process.

Every call into a plugin (``start``, ``stop``, a middleware, an event listener) goes through
``call_plugin``: the plugin's coroutine runs in its own task, bounded by a time limit, and
whatever it raises comes back as an ordinary ``Exception`` to the host, which records it on
that plugin. Two details are why this is a module and not a ``wait_for`` at each call site:

- **``SystemExit`` and other ``BaseException``s.** An asyncio task that raises ``SystemExit``
  re-raises it into the event loop, which ends ``asyncio.run``: one ``sys.exit()`` in a
  listener would end the bot. The plugin's code is wrapped so that such an exception becomes
  ``PluginAborted`` inside the task. ``asyncio.CancelledError`` and ``KeyboardInterrupt``
  pass: they belong to the loop and to the user.
- **Time spent below a middleware is not its own.** A middleware's limit counts the time it
  runs its own code; while it awaits ``call_next()`` the clock is paused (``Budget``), so a
  slow plugin deeper in the chain is charged to that plugin, not to every layer around it.

A plugin that ignores cancellation (catches ``CancelledError`` and goes on) is abandoned
after a short grace period: the host stops waiting for it and carries on. Code that blocks
the event loop itself (``time.sleep`` in a coroutine) cannot be interrupted by asyncio; see
docs/host/time-limits.md.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from aalis_core._errors import AalisError

#: How long a cancelled plugin task may take to finish before it is abandoned, seconds.
CANCEL_GRACE = 1.0

# Tasks that ignored cancellation: kept referenced so they are not collected mid-flight, and
# their eventual outcome is retrieved (no "exception was never retrieved" noise).
_abandoned: set[asyncio.Task[Any]] = set()


class PluginTimeout(AalisError):
    """Plugin code ran past its limit and was cancelled."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"timed out after {format_seconds(seconds)}")


class PluginAborted(AalisError):
    """Plugin code raised a ``BaseException`` that is not an ``Exception`` (``SystemExit``...).

    ``original`` is what it raised; the message names it (``SystemExit: 3``).
    """

    def __init__(self, original: BaseException) -> None:
        self.original = original
        text = " ".join(str(original).split())
        name = type(original).__name__
        super().__init__(f"{name}: {text}" if text else name)


def format_seconds(seconds: float) -> str:
    """``30 s``, ``0.2 s``: how limits are named in messages."""
    return f"{seconds:g} s"


def describe(exc: BaseException) -> str:
    """The one-line text of a plugin failure (a time-out or abort says it without a type)."""
    if isinstance(exc, PluginTimeout | PluginAborted):
        return str(exc)
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


async def _contained(fn: Callable[[], Any]) -> Any:
    """Call ``fn`` (sync or async); a non-``Exception`` escape becomes ``PluginAborted``."""
    try:
        result = fn()
        if inspect.isawaitable(result):
            result = await result
        return result
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception:
        raise
    except BaseException as exc:  # SystemExit, GeneratorExit, a custom BaseException
        raise PluginAborted(exc) from exc


class Budget:
    """The time a piece of plugin code may still run; paused while others' code runs.

    ``pause()``/``resume()`` are called around a middleware's ``call_next()``; ``watch``
    waits for a task while charging only unpaused time.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.left = seconds
        self._paused = 0
        self._changed: asyncio.Future[None] | None = None

    def _signal(self) -> None:
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)

    def pause(self) -> None:
        self._paused += 1
        self._signal()

    def resume(self) -> None:
        self._paused -= 1
        self._signal()

    async def watch(self, task: asyncio.Future[Any]) -> bool:
        """Wait until ``task`` is done (True) or the budget is spent while unpaused (False)."""
        loop = asyncio.get_running_loop()
        while not task.done():
            self._changed = loop.create_future()
            if self._paused:
                await asyncio.wait({task, self._changed}, return_when=asyncio.FIRST_COMPLETED)
                continue
            started = loop.time()
            await asyncio.wait(
                {task, self._changed},
                timeout=max(self.left, 0.0),
                return_when=asyncio.FIRST_COMPLETED,
            )
            self.left -= loop.time() - started
            if not task.done() and not self._paused and self.left <= 0:
                return False
        return True


def _retrieve(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    if not task.cancelled():
        task.exception()


async def _cancel(task: asyncio.Task[Any], grace: float) -> None:
    """Cancel ``task`` and wait up to ``grace`` for it; abandon it if it will not end."""
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=grace)
    if not done:
        _abandoned.add(task)
        task.add_done_callback(_retrieve)
    elif not task.cancelled():
        task.exception()  # whatever it raised while being cancelled: it timed out anyway


async def call_plugin(
    fn: Callable[[], Any],
    seconds: float,
    *,
    budget: Budget | None = None,
    name: str | None = None,
) -> Any:
    """Run plugin code ``fn()`` (sync, or returning an awaitable) within ``seconds``.

    Returns its result; raises what it raised (``PluginAborted`` for a ``SystemExit`` and
    the like) or ``PluginTimeout`` once it ran past the limit (it is then cancelled).
    ``budget`` replaces the plain limit with one that can be paused (middleware). If the
    caller is cancelled, the plugin's task is cancelled too.
    """
    clock = budget if budget is not None else Budget(seconds)
    task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(
        _contained(fn), name=f"aalis plugin {name}" if name else None
    )
    try:
        finished = await clock.watch(task)
    except BaseException:
        task.cancel()
        raise
    if not finished:
        await _cancel(task, min(CANCEL_GRACE, clock.seconds))
        raise PluginTimeout(clock.seconds)
    if task.cancelled():  # the plugin raised CancelledError itself; nobody cancelled it
        raise PluginAborted(asyncio.CancelledError("cancelled itself"))
    return task.result()


__all__ = [
    "CANCEL_GRACE",
    "Budget",
    "PluginAborted",
    "PluginTimeout",
    "call_plugin",
    "describe",
    "format_seconds",
]
