"""LangChain's ``SQLChatMessageHistory`` as a peer: loading its table, timing its reads.

The peer is used exactly as its documentation shows (``history.messages[-50:]``,
``history.add_message``) on its own table, which it creates itself; only the bulk load
bypasses it (one ``executemany`` of the very JSON rows ``add_message`` writes), because
inserting a million rows through its ORM one by one would dominate the run.

Reads of large sessions can take minutes, so they run in a child process that the parent
kills at the time budget: a benchmark run is always bounded.

``langchain-community`` is optional (``pip install -e ".[bench]"``); ``available()`` says
whether it is installed, and every benchmark reports the peer as "not measured" without it.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

TABLE = "message_store"


def available() -> tuple[bool, str]:
    """Whether the peer can run, and why not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import langchain_community.chat_message_histories.sql  # noqa: F401
            import langchain_core.messages  # noqa: F401
    except Exception as exc:  # ImportError, or sqlalchemy[asyncio] missing greenlet
        return (
            False,
            f"langchain-community is not usable ({type(exc).__name__}: {exc}); install the bench extra",
        )
    return True, ""


def _history(db_path: Path, session_id: str, durable_like_ours: bool = True) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import SQLChatMessageHistory
        from sqlalchemy import create_engine, event

    engine = create_engine(f"sqlite:///{db_path}")
    if durable_like_ours:
        # Equal durability with our backend: WAL and synchronous=NORMAL on every connection.
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    return SQLChatMessageHistory(session_id=session_id, connection=engine, table_name=TABLE)


def message_json(role: str, content: str) -> str:
    """The row text ``add_message`` writes for a message of ``role`` (user/assistant)."""
    from langchain_core.messages import AIMessage, HumanMessage, message_to_dict

    message = HumanMessage(content=content) if role == "user" else AIMessage(content=content)
    return json.dumps(message_to_dict(message))


def load(db_path: Path, session_id: str, rows: Iterable[tuple[str, str]]) -> int:
    """Create LangChain's table (through LangChain) and bulk-load ``(role, content)`` rows."""
    _history(db_path, session_id)  # creates the table exactly as the peer defines it
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        with conn:
            cursor = conn.executemany(
                f"INSERT INTO {TABLE} (session_id, message) VALUES (?, ?)",
                ((session_id, message_json(role, content)) for role, content in rows),
            )
            count = cursor.rowcount
    return count


def adder(db_path: Path, session_id: str) -> Any:
    """A bound ``add_message`` and a factory of the messages it takes."""
    from langchain_core.messages import HumanMessage

    history = _history(db_path, session_id)

    def add(content: str) -> None:
        history.add_message(HumanMessage(content=content))

    return add


def measure_last(
    db_path: Path, session_id: str, limit: int, calls: int, budget_s: float
) -> dict[str, Any]:
    """Time ``history.messages[-limit:]`` in a child process bounded by ``budget_s``.

    Returns ``{"samples_ns": [...], "timed_out": bool, "first_call_s": float | None}``.
    The child stops repeating once the next call would overrun the budget.
    """
    command = [
        sys.executable,
        "-W",
        "ignore",
        str(Path(__file__).resolve()),
        "last",
        str(db_path),
        session_id,
        str(limit),
        str(calls),
        str(budget_s),
    ]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=budget_s + 10)
    except subprocess.TimeoutExpired:
        return {"samples_ns": [], "timed_out": True, "first_call_s": None}
    if proc.returncode != 0:
        raise RuntimeError(f"LangChain child failed: {proc.stderr.strip()[-500:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _child_last(db_path: str, session_id: str, limit: int, calls: int, budget_s: float) -> None:
    history = _history(Path(db_path), session_id)
    samples: list[int] = []
    deadline = time.perf_counter() + budget_s
    for _ in range(calls):
        start = time.perf_counter_ns()
        last = history.messages[-limit:]
        elapsed = time.perf_counter_ns() - start
        if len(last) != min(limit, len(last)) or not last:
            raise SystemExit("LangChain returned no messages")
        samples.append(elapsed)
        if time.perf_counter() + elapsed / 1e9 > deadline:
            break
    print(json.dumps({"samples_ns": samples, "timed_out": False, "first_call_s": samples[0] / 1e9}))


def _main(argv: list[str]) -> None:
    if argv[:1] == ["last"]:
        _, db, sid, limit, calls, budget = argv
        _child_last(db, sid, int(limit), int(calls), float(budget))
    else:
        raise SystemExit("usage: _langchain.py last DB SESSION LIMIT CALLS BUDGET_S")


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


if __name__ == "__main__":
    _main(sys.argv[1:])
