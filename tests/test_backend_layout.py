"""The four memory backends keep one layout (docs/backends/implementing.md, section 4).

A backend author who has read one backend should find the same job in the module of the same
name in every other: the contract's groups of storage methods as mixins in ``history.py``,
``queries.py``, ``identity.py``, ``transfer.py``, ``exact.py``, ``metadata.py`` and
``leases.py``, over ``base.py``, assembled by the store class of ``store.py``. This holds that
shape: a job written straight into the store class, or a module of another name, fails here.
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: backend directory -> (import package, store class)
BACKENDS = {
    "memory-inmemory": ("aalis_plugin_memory_inmemory", "InMemoryMemory"),
    "memory-sqlite": ("aalis_plugin_memory_sqlite", "SqliteMemory"),
    "memory-mongodb": ("aalis_plugin_memory_mongodb", "MongoMemory"),
    "memory-postgres": ("aalis_plugin_memory_postgres", "PostgresMemory"),
}
#: job module -> the storage methods it implements (one per contract group it holds)
JOBS = {
    "history": ("_save_message", "_get_history", "_count_history", "_clear_all"),
    "queries": ("_get_messages_by_session_range", "_update_message_content"),
    "identity": ("_get_messages_by_ids", "_delete_messages_by_ids"),
    "transfer": ("_list_sessions", "_export_session", "_import_messages"),
    "exact": ("_history_snapshot", "_archive_exact"),
    "metadata": ("_save_metadata", "_commit_metadata", "_list_namespaces"),
    "leases": ("_acquire_lease", "_release_lease"),
}
#: The private module names every backend has (``_plugin.py``, ...), besides ``__init__``.
EVERYWHERE = {"plugin", "config", "store", "base", *JOBS}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_every_backend_has_the_modules_of_the_layout(backend: str) -> None:
    package, _store = BACKENDS[backend]
    found = {
        path.stem.removeprefix("_") for path in (ROOT / "plugins" / backend / package).glob("_*.py")
    }
    assert found >= EVERYWHERE, f"{backend} lacks {sorted(EVERYWHERE - found)}"
    entry = tomllib.loads((ROOT / "plugins" / backend / "pyproject.toml").read_text("utf-8"))
    target = entry["project"]["entry-points"]["aalis.plugins"][backend]
    # The entry point names the package's public plugin class, defined in ``_plugin.py``.
    assert target.startswith(f"{package}:"), target
    cls = getattr(importlib.import_module(package), target.split(":")[1])
    assert cls.__module__ == f"{package}._plugin", cls.__module__


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("job", sorted(JOBS))
def test_each_job_is_implemented_in_its_module(backend: str, job: str) -> None:
    """The store's method comes from the job module's class, not from the store or a
    neighbour, and no module of the backend is over 600 lines."""
    package, store_name = BACKENDS[backend]
    pytest.importorskip(package)
    store = getattr(importlib.import_module(f"{package}._store"), store_name)
    for method in JOBS[job]:
        owner = next(cls for cls in store.__mro__ if method in vars(cls))
        assert owner.__module__ == f"{package}._{job}", (
            f"{store_name}.{method} is defined in {owner.__module__}.{owner.__name__}"
        )
    for path in (ROOT / "plugins" / backend / package).glob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 600, f"{path.relative_to(ROOT)} has {lines} lines"
