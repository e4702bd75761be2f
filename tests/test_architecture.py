"""The dependency rule of the architecture (docs/architecture.md), checked on the source itself.

aalis_core knows no domain; contracts depend only on aalis_core and aalis_schema_message;
plugins depend on aalis_core and contracts, never on another plugin; the unpublished test
support (testing/*) may import aalis_core, the contracts and the plugins' third-party
dependencies, never a plugin. Imports inside functions count too: a lazy import is still a
dependency.

Inside each package no module imports itself back through others (no import cycle), type-only
imports included: a cycle that works today only because one side imports under
``TYPE_CHECKING`` or inside a function breaks the day someone moves that import, and it is a
sign that two modules share a concept that belongs in a third.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
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
TESTING = _package_dirs("testing")


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
    assert "aalis_test_support" in TESTING


@pytest.mark.parametrize("name", sorted(TESTING))
def test_test_support_imports_core_and_contracts_never_a_plugin(name: str) -> None:
    """The launchers serve every suite, the plugins' own included: naming a plugin would make
    the support depend on what it tests (it loads backends by entry point instead)."""
    allowed = {"aalis_core", *CONTRACTS}
    bad = {mod: files for mod, files in _aalis_imports(TESTING[name]).items() if mod not in allowed}
    assert bad == {}, f"{name} imports {sorted(bad)}"


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


@pytest.mark.parametrize("group", ["contracts", "testing", "plugins"])
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
    packages = [
        ROOT / "aalis_core",
        *CONTRACTS.values(),
        *TESTING.values(),
        *PLUGINS.values(),
        *EXAMPLES.values(),
    ]
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


# --------------------------------------------------------------------------------------------
# No import cycle inside a package
# --------------------------------------------------------------------------------------------

ALL_PACKAGES = {
    "aalis_core": ROOT / "aalis_core",
    **CONTRACTS,
    **TESTING,
    **PLUGINS,
    **INTEGRATIONS,
    **EXAMPLES,
}


def _modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` (``__init__`` as the package)."""
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _import_targets(tree: ast.Module, module: str, is_package: bool) -> Iterator[str]:
    """Every dotted name ``module`` imports, anywhere in its source (functions and
    ``TYPE_CHECKING`` blocks too); ``from x import y`` yields both ``x`` and ``x.y``."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            yield origin
            for alias in node.names:
                yield f"{origin}.{alias.name}"


def _import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports.

    ``import a.b`` imports ``a.b``. ``from pkg import name`` imports ``pkg`` (for a package,
    its ``__init__``: the name is looked up there) and, when ``pkg.name`` is a submodule, that
    submodule as well.
    """
    modules = _modules(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target in _import_targets(tree, name, path.name == "__init__.py"):
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None (depth-first, deterministic order)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


@pytest.mark.parametrize("name", sorted(ALL_PACKAGES))
def test_no_import_cycle_inside_a_package(name: str) -> None:
    cycle = _find_cycle(_import_graph(ALL_PACKAGES[name]))
    assert cycle is None, f"{name} has an import cycle: {' -> '.join(cycle or [])}"


def test_the_cycle_check_sees_type_only_relative_and_package_imports(tmp_path: Path) -> None:
    """The check itself: a cycle through ``TYPE_CHECKING``, a relative import and a
    package ``__init__`` is found; the same modules without the back edge are not."""
    pkg = tmp_path / "aalis_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from aalis_probe.a import A\n", encoding="utf-8")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n",
        encoding="utf-8",
    )
    (pkg / "b.py").write_text("def f():\n    from aalis_probe import A\n", encoding="utf-8")
    assert _find_cycle(_import_graph(pkg)) == [
        "aalis_probe",
        "aalis_probe.a",
        "aalis_probe.b",
        "aalis_probe",
    ]
    # ``from pkg import a`` where ``a`` is a submodule imports the submodule (and ``pkg``)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "b.py").write_text("from aalis_probe import a\n", encoding="utf-8")
    assert _find_cycle(_import_graph(pkg)) == ["aalis_probe.a", "aalis_probe.b", "aalis_probe.a"]
    (pkg / "a.py").write_text("A = 1\n", encoding="utf-8")
    assert _find_cycle(_import_graph(pkg)) is None


def test_code_and_docs_point_at_docs_pages_not_at_the_spec() -> None:
    """Users never see the spec: a "SPEC §4" in a docstring or a page sends them nowhere.

    Shipped code and the docs cite docs/ pages instead (tests may still name the section
    of the spec they check).
    """
    places = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for group in ("aalis_core", "contracts", "testing", "plugins", "integrations", "examples"):
        places += [
            path
            for path in sorted((ROOT / group).rglob("*.py"))
            if "tests" not in path.relative_to(ROOT).parts
        ]
    citing = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in places
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "SPEC §" in line
    ]
    assert not citing, f"cite a docs/ page instead of the spec: {citing}"
