"""The dependency rule of the architecture (SPEC §1), checked on the source itself.

aalis_core knows no domain; contracts depend only on aalis_core and aalis_schema_message;
plugins depend on aalis_core and contracts, never on another plugin. Imports inside functions
count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _package_dirs(group: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for dist in sorted((ROOT / group).glob("*/")):
        for pkg in dist.glob("aalis_*/__init__.py"):
            found[pkg.parent.name] = pkg.parent
    return found


CONTRACTS = _package_dirs("contracts")
PLUGINS = _package_dirs("plugins")
EXAMPLES = _package_dirs("examples")
INTEGRATIONS = _package_dirs("integrations")


def _imported_top_levels(package: Path) -> dict[str, list[str]]:
    """Top-level module name -> the files that import it."""
    seen: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                seen.setdefault(name.split(".")[0], []).append(str(path.relative_to(ROOT)))
    return seen


def _aalis_imports(package: Path) -> dict[str, list[str]]:
    own = package.name
    return {
        name: files
        for name, files in _imported_top_levels(package).items()
        if name.startswith("aalis_") and name != own
    }


def test_the_layout_has_the_distributions_of_the_spec() -> None:
    assert {"aalis_schema_message", "aalis_api_memory"} <= set(CONTRACTS)
    assert "aalis_plugin_memory_inmemory" in PLUGINS


def test_core_imports_no_contract_and_no_plugin() -> None:
    assert _aalis_imports(ROOT / "aalis_core") == {}


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_contracts_depend_only_on_core_and_the_message_schema(name: str) -> None:
    allowed = {"aalis_core", "aalis_schema_message"}
    bad = {
        mod: files for mod, files in _aalis_imports(CONTRACTS[name]).items() if mod not in allowed
    }
    assert bad == {}, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("name", sorted(PLUGINS) + sorted(EXAMPLES))
def test_plugins_never_import_another_plugin(name: str) -> None:
    package = PLUGINS.get(name) or EXAMPLES[name]
    allowed = {"aalis_core", *CONTRACTS}
    bad = {mod: files for mod, files in _aalis_imports(package).items() if mod not in allowed}
    assert bad == {}, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("group", ["contracts", "plugins"])
def test_every_distribution_declares_its_aalis_dependencies(group: str) -> None:
    """What a package imports from the project must be in its pyproject dependencies."""
    for dist in sorted((ROOT / group).glob("*/pyproject.toml")):
        project = tomllib.loads(dist.read_text(encoding="utf-8"))["project"]
        declared = {
            req.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().replace("-", "_")
            for req in project.get("dependencies", [])
        }
        for pkg in dist.parent.glob("aalis_*/__init__.py"):
            for mod in _aalis_imports(pkg.parent):
                # Distribution names map to import names: aalis-api-memory -> aalis_api_memory.
                assert mod in declared, f"{dist.parent.name} imports {mod} without depending on it"


def test_every_package_is_typed() -> None:
    packages = [ROOT / "aalis_core", *CONTRACTS.values(), *PLUGINS.values(), *EXAMPLES.values()]
    missing = [str(p.relative_to(ROOT)) for p in packages if not (p / "py.typed").exists()]
    assert missing == []


@pytest.mark.parametrize("name", sorted(INTEGRATIONS))
def test_integrations_use_the_host_and_contracts_never_a_plugin(name: str) -> None:
    """An adapter works over *any* provider, so it may not know a particular plugin."""
    allowed = {"aalis_core", *CONTRACTS}
    bad = {
        mod: files
        for mod, files in _aalis_imports(INTEGRATIONS[name]).items()
        if mod not in allowed
    }
    assert bad == {}, f"{name} imports {sorted(bad)}"
