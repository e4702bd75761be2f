"""Every package has one public surface: its ``__init__``, with ``__all__`` exactly its names.

Modelled on httpx's test of its exported names. Implementation modules are private
(``_name.py``), so what a user or another part may import is what ``__init__`` lists, and a
module can be renamed or split without a release note. Only test helpers that need pytest
(``testing``) and the kits' pytest entry (``pytest_plugin``) may be public submodules.
See docs/architecture.md (public surfaces).
"""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Public submodules a package may have beside ``__init__``.
ALLOWED_SUBMODULES = {"testing", "pytest_plugin"}
#: Module globals that are not part of the surface (the lazy re-export machinery).
MACHINERY = {"TYPE_CHECKING", "annotations"}


def _packages() -> dict[str, Path]:
    found = {"aalis_core": ROOT / "aalis_core"}
    for group in ("contracts", "runtime", "plugins", "integrations", "examples"):
        for init in sorted((ROOT / group).glob("*/aalis_*/__init__.py")):
            found[init.parent.name] = init.parent
    return found


PACKAGES = _packages()


def public_submodules(package: Path) -> list[str]:
    """The modules and subpackages directly under ``package`` whose name is not private."""
    return sorted(
        path.name
        for path in package.iterdir()
        if not path.name.startswith(("_", "."))
        and (path.suffix == ".py" or (path / "__init__.py").exists())
        and path.stem not in ALLOWED_SUBMODULES
    )


def surface_problems(module: types.ModuleType) -> list[str]:
    """What is wrong with a package's ``__all__``: missing names, modules, unlisted names."""
    problems: list[str] = []
    listed = list(getattr(module, "__all__", []))
    if len(listed) != len(set(listed)):
        problems.append("__all__ lists a name twice")
    for name in listed:
        try:
            value = getattr(module, name)
        except AttributeError:
            problems.append(f"{name} is listed but missing")
            continue
        if isinstance(value, types.ModuleType):
            problems.append(f"{name} is a module, not a name")
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and name not in MACHINERY
        and not isinstance(value, types.ModuleType)
    }
    problems += [f"{name} is public but not in __all__" for name in sorted(public - set(listed))]
    return problems


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_implementation_modules_are_private(name: str) -> None:
    assert public_submodules(PACKAGES[name]) == []


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_all_is_exactly_the_public_names(name: str) -> None:
    module = importlib.import_module(name)
    assert surface_problems(module) == []


def test_the_checks_see_a_public_module_and_an_unlisted_name(tmp_path: Path) -> None:
    pkg = tmp_path / "aalis_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "_impl.py").write_text("", encoding="utf-8")
    (pkg / "testing.py").write_text("", encoding="utf-8")
    assert public_submodules(pkg) == []
    (pkg / "helpers.py").write_text("", encoding="utf-8")
    assert public_submodules(pkg) == ["helpers.py"]

    probe = types.ModuleType("aalis_probe")
    probe.__all__ = ["Known", "gone"]  # type: ignore[attr-defined]
    probe.Known = 1  # type: ignore[attr-defined]
    probe.Extra = 2  # type: ignore[attr-defined]
    assert surface_problems(probe) == [
        "gone is listed but missing",
        "Extra is public but not in __all__",
    ]
