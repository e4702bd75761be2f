"""Every error the project raises on purpose sits in one documented tree, drawn true.

Two drawings, both kept true here:

* each package with an errors module (``aalis_core._errors``, ``aalis_api_*.errors``) draws
  in its docstring the tree of **its own** classes: every public exception class defined in
  that package, under its real parent and with its built-in bases, and no other package's
  class;
* docs/reference/errors.md draws the tree across every package: each class of shipped code
  once, with the package that defines it, its parent and its built-in bases, and nothing that
  does not exist.

And every public exception class in shipped code derives from ``AalisError``. So a new
error cannot be added without joining (and documenting) the hierarchy, and a tree cannot
keep a class that moved away or list another package's.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import attrs
import pytest

from aalis_core._errors import AalisError

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "errors.md"


def _package_roots() -> list[Path]:
    roots = [ROOT / "aalis_core"]
    for group in ("contracts", "runtime", "plugins", "integrations"):
        roots += [p.parent for p in sorted((ROOT / group).glob("*/aalis_*/__init__.py"))]
    return roots


def _shipped_modules() -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for package in _package_roots():
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
#: (package, class name) -> class: the key every drawing is compared on.
BY_KEY: dict[tuple[str, str], type[BaseException]] = {
    (qualified.split(".")[0], cls.__name__): cls for qualified, cls in CLASSES
}
#: The packages that draw their own tree: those with an errors module at the top (``errors``,
#: or ``_errors`` once a package keeps its modules private).
ERRORS_MODULES = [
    f"{root.name}.{path.stem}"
    for root in _package_roots()
    for path in (root / "errors.py", root / "_errors.py")
    if path.is_file()
]


def _package(cls: type) -> str:
    return cls.__module__.split(".")[0]


def _parent(cls: type[BaseException]) -> type[BaseException] | None:
    """The class's base in the tree (None for the root)."""
    if cls is AalisError:
        return None
    return next(b for b in cls.__bases__ if issubclass(b, AalisError))


def _builtins(cls: type[BaseException]) -> frozenset[str]:
    return frozenset(
        b.__name__ for b in cls.__bases__ if not issubclass(b, AalisError) and b is not Exception
    )


@attrs.frozen
class Drawn:
    """One line of a drawn tree."""

    name: str
    parent: Drawn | None
    builtins: frozenset[str]
    rest: str

    @property
    def package(self) -> str:
        """The package a line of docs/reference/errors.md names (``pkg: what``)."""
        return self.rest.strip().split(":")[0].strip()


_LINE = re.compile(
    r"^(?P<prefix>(?:[│ ]   )*(?:[├└]── )?)(?P<name>[A-Za-z_]\w*)"
    r"(?: \((?P<builtins>[^)]*)\))?(?P<rest>.*)$"
)


def parse_tree(lines: list[str]) -> list[Drawn]:
    """A tree drawn with box characters, four columns a level; the first line is depth 0."""
    drawn: list[Drawn] = []
    stack: list[Drawn] = []
    for line in lines:
        match = _LINE.match(line)
        assert match, f"not a tree line: {line!r}"
        depth = len(match["prefix"]) // 4
        assert depth <= len(stack), f"a line skips a level: {line!r}"
        del stack[depth:]
        builtins = frozenset(
            b.strip().rsplit(".", 1)[-1] for b in (match["builtins"] or "").split(",") if b.strip()
        )
        entry = Drawn(match["name"], stack[-1] if stack else None, builtins, match["rest"])
        drawn.append(entry)
        stack.append(entry)
    return drawn


def docstring_tree(doc: str) -> list[Drawn]:
    """The literal block after the docstring's first line ending in ``::``."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith("::")) + 1
    block: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            if block:
                break
            continue
        if not line.startswith("    "):
            break
        block.append(line[4:].rstrip())
    return parse_tree(block)


def page_tree(text: str) -> list[Drawn]:
    """The ``text`` block under "## The tree" on docs/reference/errors.md."""
    section = text.split("\n## The tree\n", 1)[1]
    block = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    return parse_tree(block.splitlines())


def test_the_scan_finds_the_errors() -> None:
    found = {qualified.rsplit(".", 1)[1] for qualified, _ in CLASSES}
    assert {"ConfigError", "StoreClosed", "CompressionError", "LLMError", "WorkerClosed"} <= found
    assert {"aalis_core", "aalis_api_memory", "aalis_api_llm"} <= {
        name.split(".")[0] for name in ERRORS_MODULES
    }
    assert len(BY_KEY) == len(CLASSES), "two classes of one name in one package"


@pytest.mark.parametrize(("qualified", "cls"), CLASSES, ids=[q for q, _ in CLASSES])
def test_every_error_derives_from_the_root(qualified: str, cls: type[BaseException]) -> None:
    assert issubclass(cls, AalisError), f"{qualified} does not derive from AalisError"


@pytest.mark.parametrize("module_name", ERRORS_MODULES)
def test_each_package_draws_its_own_classes_only(module_name: str) -> None:
    package = module_name.split(".")[0]
    drawn = docstring_tree(importlib.import_module(module_name).__doc__ or "")
    own = {name: cls for (pkg, name), cls in BY_KEY.items() if pkg == package}
    names = [entry.name for entry in drawn]
    problems = [f"drawn twice: {n}" for n in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"missing: {n}" for n in sorted(set(own) - set(names))]
    problems += [
        f"not a class of {package}: {n}" + (f" (it is {_owners(n)}'s)" if _owners(n) else "")
        for n in sorted(set(names) - set(own))
    ]
    for entry in drawn:
        cls = own.get(entry.name)
        if cls is None:
            continue
        parent = _parent(cls)
        if entry.parent is not None and (parent is None or entry.parent.name != parent.__name__):
            problems.append(f"{entry.name} drawn under {entry.parent.name}, derives from {parent}")
        if entry.parent is None and parent is not None and _package(parent) == package:
            problems.append(f"{entry.name} drawn as a root, derives from {parent.__name__}")
        if entry.builtins != _builtins(cls):
            problems.append(
                f"{entry.name}: drawn ({', '.join(sorted(entry.builtins))}), "
                f"built-in bases ({', '.join(sorted(_builtins(cls)))})"
            )
    assert not problems, f"{module_name}'s tree:\n" + "\n".join(problems)


def _owners(name: str) -> str:
    """The packages that define a class of this name, for the message."""
    return " and ".join(sorted(pkg for pkg, n in BY_KEY if n == name))


def test_the_reference_page_draws_every_class_once() -> None:
    drawn = page_tree(PAGE.read_text(encoding="utf-8"))
    keys = [(entry.package, entry.name) for entry in drawn]
    problems = [f"drawn twice: {k}" for k in sorted({k for k in keys if keys.count(k) > 1})]
    problems += [f"missing: {pkg}.{name}" for pkg, name in sorted(set(BY_KEY) - set(keys))]
    problems += [f"no such class: {pkg}.{name}" for pkg, name in sorted(set(keys) - set(BY_KEY))]
    for entry in drawn:
        cls = BY_KEY.get((entry.package, entry.name))
        if cls is None:
            continue
        parent = _parent(cls)
        drawn_parent = None if entry.parent is None else (entry.parent.package, entry.parent.name)
        real_parent = None if parent is None else (_package(parent), parent.__name__)
        if drawn_parent != real_parent:
            problems.append(
                f"{entry.package}.{entry.name} drawn under {drawn_parent}, "
                f"derives from {real_parent}"
            )
        if entry.builtins != _builtins(cls):
            problems.append(
                f"{entry.package}.{entry.name}: drawn "
                f"({', '.join(sorted(entry.builtins))}), built-in bases "
                f"({', '.join(sorted(_builtins(cls)))})"
            )
    assert not problems, f"{PAGE.relative_to(ROOT)}:\n" + "\n".join(problems)
