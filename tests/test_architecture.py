"""The dependency rule of the architecture (docs/architecture.md), checked on the source itself.

The parts, and what each may import (imports inside functions count too: a lazy import is
still a dependency):

* ``aalis_core``, the host, knows no domain: it imports no other part;
* a contract (``contracts/<name>``) imports only ``aalis_core`` and ``aalis_schema_message``;
* a conformance kit (``contracts/<name>-conformance``) imports those and the contracts;
* a runtime part (``runtime/``: the agent, the memory tools) imports contracts and other
  runtime parts, never a plugin;
* a plugin imports the host, contracts and runtime parts, never another plugin;
* an integration (an adapter to another framework) works over *any* provider: the host,
  contracts and runtime parts, never a plugin;
* the unpublished test support (``testing/*``: the database launchers every suite shares)
  imports the host and the contracts, never a plugin (it loads backends by entry point), so
  it does not depend on what it tests.

Across parts only the public surface is imported: ``from aalis_x import Name`` (or a
documented public submodule, ``testing``), never ``aalis_x._module``; tests may reach inside.

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


def _package_dirs(group: str, kits: bool | None = None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for dist in sorted((ROOT / group).glob("*/")):
        if kits is not None and dist.name.endswith("-conformance") != kits:
            continue
        for pkg in dist.glob("aalis_*/__init__.py"):
            found[pkg.parent.name] = pkg.parent
    return found


CORE = {"aalis_core": ROOT / "aalis_core"}
CONTRACTS = _package_dirs("contracts", kits=False)
KITS = _package_dirs("contracts", kits=True)
RUNTIME = _package_dirs("runtime")
PLUGINS = _package_dirs("plugins")
EXAMPLES = _package_dirs("examples")
INTEGRATIONS = _package_dirs("integrations")
TESTING = _package_dirs("testing")

#: Part -> (its packages, the packages it may import besides its own).
RULES: dict[str, tuple[dict[str, Path], set[str]]] = {
    "core": (CORE, set()),
    "contracts": (CONTRACTS, {"aalis_core", "aalis_schema_message"}),
    "kits": (KITS, {"aalis_core", *CONTRACTS}),
    "runtime": (RUNTIME, {"aalis_core", *CONTRACTS, *RUNTIME}),
    "plugins": (PLUGINS, {"aalis_core", *CONTRACTS, *RUNTIME}),
    "examples": (EXAMPLES, {"aalis_core", *CONTRACTS, *RUNTIME}),
    "integrations": (INTEGRATIONS, {"aalis_core", *CONTRACTS, *RUNTIME}),
    "testing": (TESTING, {"aalis_core", *CONTRACTS}),
}

#: Submodules a package may publish beside its ``__init__``: test helpers that need pytest.
PUBLIC_SUBMODULES = {"testing"}


def _imports(package: Path) -> Iterator[tuple[str, str]]:
    """(dotted module imported, file) for every import in ``package``'s own code."""
    for path in sorted(package.rglob("*.py")):
        where = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name, where
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield node.module, where


def _aalis_imports(package: Path) -> dict[str, list[str]]:
    """Other aalis packages ``package`` imports -> the files that import them."""
    seen: dict[str, list[str]] = {}
    for module, where in _imports(package):
        top = module.split(".")[0]
        if top.startswith("aalis_") and top != package.name:
            seen.setdefault(top, []).append(where)
    return seen


def _part_cases() -> list[tuple[str, str]]:
    return [(part, name) for part, (pkgs, _) in RULES.items() for name in sorted(pkgs)]


def test_the_layout_has_the_parts_of_the_architecture() -> None:
    assert {"aalis_schema_message", "aalis_api_memory"} <= set(CONTRACTS)
    assert "aalis_api_memory_conformance" in KITS
    assert {"aalis_agent", "aalis_memory_tools"} <= set(RUNTIME)
    assert "aalis_plugin_memory_inmemory" in PLUGINS
    assert "aalis_test_support" in TESTING


@pytest.mark.parametrize(("part", "name"), _part_cases())
def test_each_part_imports_only_what_its_rule_allows(part: str, name: str) -> None:
    packages, allowed = RULES[part]
    bad = {
        mod: files for mod, files in _aalis_imports(packages[name]).items() if mod not in allowed
    }
    assert bad == {}, f"{name} ({part}) may not import {sorted(bad)}"


def _private_imports(package: Path) -> list[str]:
    """Imports of another package's private modules (``aalis_x._y``) in ``package``."""
    found = []
    for module, where in _imports(package):
        parts = module.split(".")
        foreign = parts[0].startswith("aalis_") and parts[0] != package.name
        if foreign and len(parts) > 1 and parts[1] not in PUBLIC_SUBMODULES:
            found.append(f"{where}: {module}")
    return found


@pytest.mark.parametrize(("part", "name"), _part_cases())
def test_parts_meet_only_at_public_surfaces(part: str, name: str) -> None:
    """``from aalis_x import Name``, never ``from aalis_x._module import Name``: a private
    module may be renamed or split in any release, the package's ``__all__`` may not."""
    assert _private_imports(RULES[part][0][name]) == []


def test_the_public_surface_rule_sees_a_private_import(tmp_path: Path) -> None:
    pkg = tmp_path / "aalis_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from aalis_core import Plugin\n", encoding="utf-8")
    assert _private_imports(pkg) == []
    (pkg / "b.py").write_text("def f():\n    from aalis_core._host import Host\n", encoding="utf-8")
    assert len(_private_imports(pkg)) == 1


def _distributions() -> Iterator[Path]:
    for group in ("contracts", "runtime", "testing", "plugins", "integrations", "examples"):
        yield from sorted((ROOT / group).glob("*/pyproject.toml"))


@pytest.mark.parametrize("pyproject", list(_distributions()), ids=lambda p: p.parent.name)
def test_every_distribution_declares_its_aalis_dependencies(pyproject: Path) -> None:
    """What a package imports from the project must be in its pyproject dependencies."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    declared = {
        req.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().replace("-", "_")
        for req in project.get("dependencies", [])
    }
    for pkg in pyproject.parent.glob("aalis_*/__init__.py"):
        for mod in _aalis_imports(pkg.parent):
            # Distribution names map to import names: aalis-api-memory -> aalis_api_memory.
            assert mod in declared, f"{pyproject.parent.name} imports {mod} without depending on it"


def test_every_package_is_typed() -> None:
    packages = [p for pkgs, _ in RULES.values() for p in pkgs.values()]
    missing = [str(p.relative_to(ROOT)) for p in packages if not (p / "py.typed").exists()]
    assert missing == []


# --------------------------------------------------------------------------------------------
# No import cycle inside a package
# --------------------------------------------------------------------------------------------

ALL_PACKAGES = {name: path for pkgs, _ in RULES.values() for name, path in pkgs.items()}


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
    for group in ("aalis_core", "contracts", "runtime", "plugins", "integrations", "examples"):
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
