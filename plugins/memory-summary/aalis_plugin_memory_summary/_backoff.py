"""Per-session back-off for automatic compression.

An agent reports ``token_usage`` after every model call; if the summary model is down, each
report would start a compression that fails the same way. After a failure the session waits
60 s, then 120 s, 240 s ... up to 30 min; a success or a clear of the session resets it.
The clock is injected so tests can move time instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

FIRST_DELAY = 60.0
MAX_DELAY = 30 * 60.0


class Backoff:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        first: float = FIRST_DELAY,
        cap: float = MAX_DELAY,
    ) -> None:
        self._clock = clock
        self._first = first
        self._cap = cap
        self._failures: dict[str, int] = {}
        self._until: dict[str, float] = {}

    def blocked(self, session_id: str) -> bool:
        """True while ``session_id`` is waiting after a failure."""
        until = self._until.get(session_id)
        return until is not None and self._clock() < until

    def remaining(self, session_id: str) -> float:
        until = self._until.get(session_id)
        return max(0.0, until - self._clock()) if until is not None else 0.0

    def failed(self, session_id: str) -> float:
        """Record a failure; returns the delay now in force."""
        failures = self._failures.get(session_id, 0) + 1
        self._failures[session_id] = failures
        delay = min(self._cap, self._first * 2.0 ** (failures - 1))
        self._until[session_id] = self._clock() + delay
        return delay

    def reset(self, session_ids: Iterable[str] | None = None) -> None:
        """Forget failures of these sessions (every session when None)."""
        if session_ids is None:
            self._failures.clear()
            self._until.clear()
            return
        for session_id in session_ids:
            self._failures.pop(session_id, None)
            self._until.pop(session_id, None)


__all__ = ["FIRST_DELAY", "MAX_DELAY", "Backoff"]
