"""Package-level promises: lazy exports, cheap import, no domain imports in aalis_core."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import aalis_core

HEAVY = ("structlog", "click", "attr", "attrs", "importlib_metadata", "pluggy", "typing")


def modules_loaded_by(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
    return set(filter(None, out.split(",")))


def test_import_is_lazy() -> None:
    assert modules_loaded_by("import aalis_core") == set()


def test_plugin_module_imports_stay_light() -> None:
    loaded = modules_loaded_by("from aalis_core import Plugin, hookimpl, Capability")
    assert not loaded & {"structlog", "click", "attr", "attrs", "importlib_metadata"}


def test_every_public_name_resolves() -> None:
    for name in aalis_core.__all__:
        assert getattr(aalis_core, name) is not None
    assert set(aalis_core.__all__) >= {
        "Plugin",
        "PluginDisabled",
        "hookimpl",
        "hookspec",
        "Capability",
        "CapabilityAbsent",
        "Handle",
        "PluginContext",
        "Host",
        "PluginInfo",
        "ConfigError",
        "get_logger",
        "redact",
    }


def test_core_imports_no_contract_or_plugin() -> None:
    root = Path(aalis_core.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if n.startswith(("aalis_api_", "aalis_plugin_", "aalis_schema_"))
            ]
    assert offenders == []


def test_py_typed_marker() -> None:
    assert (Path(aalis_core.__file__).parent / "py.typed").exists()
