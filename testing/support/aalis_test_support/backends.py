"""Memory backends as the cross-backend suites reach them: by entry point, never by import.

The reliability, migrate, privacy and memory-summary suites run on every memory backend that
is installed and skip the others; they load a backend's plugin class through its ``aalis.plugins``
entry point, as the host does, so this package names no plugin module. The server-side data a
test gave a backend (a MongoDB database, a PostgreSQL schema) is dropped through the launchers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import pytest

#: Every memory backend of the repository, as entry-point names.
BACKENDS = ("memory-inmemory", "memory-sqlite", "memory-mongodb", "memory-postgres")


def plugin_class(name: str) -> Any:
    """The plugin class behind entry point ``name``; skips the test when it is not installed."""
    import importlib_metadata

    for ep in importlib_metadata.entry_points(group="aalis.plugins", name=name):
        try:
            return ep.load()
        except Exception as exc:  # a backend that is being built and does not import yet
            pytest.skip(f"plugin {name} does not import: {type(exc).__name__}: {exc}")
    pytest.skip(f"plugin {name} is not installed")


async def drop_server_data(name: str, table: Mapping[str, Any]) -> None:
    """Drop what backend ``name`` stored under its config ``table`` (best effort).

    memory-mongodb: the ``database``; memory-postgres: the ``schema``; nothing for the others,
    whose data lives in the test's own directory or in process memory. A failure is ignored:
    clean-up never hides the test's own outcome.
    """
    if name == "memory-mongodb":
        from aalis_test_support.mongodb import drop_database

        with contextlib.suppress(Exception):
            await asyncio.to_thread(drop_database, table["uri"], table["database"])
    elif name == "memory-postgres":
        from aalis_test_support.postgres import drop_schema

        with contextlib.suppress(Exception):
            await asyncio.to_thread(drop_schema, table["uri"], table["schema"])


__all__ = ["BACKENDS", "drop_server_data", "plugin_class"]
