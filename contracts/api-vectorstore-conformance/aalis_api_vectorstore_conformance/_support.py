"""Record builders and a brute-force reference ranking shared by the kit's tests."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from aalis_api_vectorstore import ScopeFilter, VectorKey, VectorRecord

#: A fixed epoch-ms base so tests never depend on the clock.
T0 = 1_700_000_000_000
MODEL = "kit-model-a"


def seeded_vector(seed: int | str, dim: int = 16) -> list[float]:
    """A reproducible random direction."""
    rng = random.Random(seed)
    return [rng.gauss(0.0, 1.0) for _ in range(dim)]


def near(base: Sequence[float], seed: int | str, spread: float) -> list[float]:
    """``base`` nudged by noise of relative size ``spread``."""
    noise = seeded_vector(seed, len(base))
    return [b + spread * n for b, n in zip(base, noise, strict=True)]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0.0 or nb == 0.0 else dot / (na * nb)


def rec(
    session_id: str,
    ts: int,
    vector: Sequence[float],
    *,
    role: str = "user",
    model_id: str = MODEL,
    text: str | None = None,
    platform: str | None = None,
    user_id: str | None = None,
    message_id: str | None = None,
) -> VectorRecord:
    """A record stamped ``T0 + ts`` whose text names it unless given; its message id is
    ``session/ts/role`` unless given (tests of shared timestamps give their own)."""
    return VectorRecord(
        message_id=message_id if message_id is not None else f"{session_id}/{ts}/{role}",
        session_id=session_id,
        timestamp=T0 + ts,
        role=role,
        model_id=model_id,
        text=text if text is not None else f"{session_id}/{ts}/{role}",
        vector=vector,
        platform=platform,
        user_id=user_id,
    )


def scope(
    sessions: Iterable[str] | None,
    *,
    model_id: str = MODEL,
    platform: str | None = None,
    user_id: str | None = None,
    exclude: Iterable[str] = (),
    roles: Iterable[str] | None = None,
) -> ScopeFilter:
    return ScopeFilter(
        model_id=model_id,
        session_ids=None if sessions is None else frozenset(sessions),
        platform=platform,
        user_id=user_id,
        exclude_session_ids=frozenset(exclude),
        roles=None if roles is None else frozenset(roles),
    )


def brute_force(
    records: Sequence[VectorRecord], query: Sequence[float], k: int, where: ScopeFilter
) -> list[tuple[VectorKey, float]]:
    """The exact answer: every record in scope ranked by cosine."""
    scored = [
        (record.key, cosine(query, record.vector))
        for record in records
        if where.matches(
            session_id=record.session_id,
            role=record.role,
            model_id=record.model_id,
            platform=record.platform,
            user_id=record.user_id,
        )
    ]
    scored.sort(key=lambda item: -item[1])
    return scored[:k]


__all__ = ["MODEL", "T0", "brute_force", "cosine", "near", "rec", "scope", "seeded_vector"]
