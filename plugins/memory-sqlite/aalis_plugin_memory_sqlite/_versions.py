"""The schema's version numbers: the migration names and what ``PRAGMA user_version`` holds.

Apart from both ``schema.py`` (which opens a file and must know whether it is current without
importing sqlite-utils) and ``migrations.py`` (which defines the migrations under these
names), so that each of them imports this module and neither imports the other at load time.

Adding a migration: append its name here, then define it in ``migrations.py`` under that name
(docs/architecture.md, "How to change it").
"""

from __future__ import annotations

import sqlite3

#: The ``migration_set`` under which sqlite-utils records the applied migrations.
MIGRATION_SET = "aalis-memory-sqlite"

#: Migration names in order; released names never change.
MIGRATION_NAMES: tuple[str, ...] = (
    "0001_messages_and_metadata",
    "0002_counters_and_filter_columns",
    "0003_message_ids",
)

#: Number of migrations this version knows; ``PRAGMA user_version`` of a current file.
SCHEMA_VERSION = len(MIGRATION_NAMES)


def user_version(conn: sqlite3.Connection) -> int:
    """The file's ``PRAGMA user_version``: how many migrations were applied to it."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


__all__ = ["MIGRATION_NAMES", "MIGRATION_SET", "SCHEMA_VERSION", "user_version"]
