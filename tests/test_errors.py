"""Every error the project raises on purpose sits in one documented tree.

Each layer's errors module (``aalis_core.errors``, ``aalis_api_*.errors``) draws its tree in
its docstring; this test keeps the drawing true: every public exception class defined in
shipped code derives from ``AalisError`` and is named in one of those trees, so a new error
cannot be added without joining (and documenting) the hierarchy.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from aalis_core.errors import AalisError

ROOT = Path(__file__).resolve().parents[1]
ERRORS_MODULES = (
    "aalis_core.errors",
    "aalis_api_memory._errors",
    "aalis_api_llm.errors",
    "aalis_api_embedding.errors",
    "aalis_api_vectorstore.errors",
    "aalis_api_relation.errors",
)


def _shipped_modules() -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    roots = [ROOT / "aalis_core"]
    for group in ("contracts", "plugins", "integrations"):
        roots += [p.parent for p in (ROOT / group).glob("*/aalis_*/__init__.py")]
    for package in roots:
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package.parent).with_suffix("").parts
            if "tests" in parts:
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, path))
    return found


def _exception_classes() -> list[tuple[str, type[BaseException]]]:
    classes: list[tuple[str, type[BaseException]]] = []
    for module_name, path in _shipped_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
        ]
        if not names:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an optional peer library is missing
            continue
        for name in names:
            value = getattr(module, name, None)
            if isinstance(value, type) and issubclass(value, BaseException):
                classes.append((f"{module_name}.{name}", value))
    return classes


CLASSES = _exception_classes()


def test_the_scan_finds_the_errors() -> None:
    found = {qualified.rsplit(".", 1)[1] for qualified, _ in CLASSES}
    assert {"ConfigError", "StoreClosed", "CompressionError", "LLMError"} <= found


@pytest.mark.parametrize(("qualified", "cls"), CLASSES, ids=[q for q, _ in CLASSES])
def test_every_error_derives_from_the_root(qualified: str, cls: type[BaseException]) -> None:
    assert issubclass(cls, AalisError), f"{qualified} does not derive from AalisError"


def test_every_error_is_drawn_in_a_tree() -> None:
    drawn: set[str] = set()
    for module_name in ERRORS_MODULES:
        doc = importlib.import_module(module_name).__doc__ or ""
        drawn |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", doc))
    missing = sorted({q for q, cls in CLASSES if cls.__name__ not in drawn})
    assert not missing, f"not named in any errors module's tree: {missing}"
