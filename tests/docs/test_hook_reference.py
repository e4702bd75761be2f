"""Every hookspec has its section on docs/reference/hooks.md, and the page documents no other.

The way datasette ties its plugin hooks to their documentation: the hookspecs are found where
the host finds them (``aalis_core._hookspecs`` and every module a ``pyproject.toml`` of the
repository publishes under ``aalis.hookspecs``, installed or not), the sections are the
page's ``### `name(args)``` headings under ``## Declared by `package```, and the two must
agree on the names, the arguments and the declaring package.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aalis_core._discovery import HOOKSPECS_GROUP
from aalis_core._markers import PROJECT_NAME

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "hooks.md"
SPEC_ATTR = f"{PROJECT_NAME}_spec"

_GROUP = re.compile(r"^## Declared by `([\w.]+)`\s*$")
_HOOK = re.compile(r"^### `(\w+)\(([^)]*)\)`\s*$")


def published_hookspec_modules() -> list[str]:
    """``aalis_core``'s hookspecs module and every ``aalis.hookspecs`` entry point in the
    repository, installed or not."""
    found = [f"aalis_core.{p.stem}" for p in sorted((ROOT / "aalis_core").glob("*hookspecs.py"))]
    for path in sorted(ROOT.glob("*/*/pyproject.toml")):
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
        for value in project.get("entry-points", {}).get(HOOKSPECS_GROUP, {}).values():
            found.append(value)
    return found


def declared_hooks() -> dict[str, Callable[..., Any]]:
    hooks: dict[str, Callable[..., Any]] = {}
    for value in published_hookspec_modules():
        module_name, _, attr = value.partition(":")
        holder: Any = importlib.import_module(module_name)
        if attr:
            holder = getattr(holder, attr)
        for name in dir(holder):
            member = getattr(holder, name)
            if callable(member) and getattr(member, SPEC_ATTR, None) is not None:
                hooks[name] = member
    return hooks


def documented_hooks(text: str) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """``name -> (declaring package, argument names)`` from the page's headings."""
    sections: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    package: str | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            group = _GROUP.match(line)
            package = group.group(1) if group else None
            continue
        hook = _HOOK.match(line)
        if hook:
            name, args = hook.groups()
            assert name not in sections, f"{name} has two sections"
            sections[name] = (package, tuple(a.strip() for a in args.split(",") if a.strip()))
    return sections


def spec_arguments(spec: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(name for name in inspect.signature(spec).parameters if name not in ("self", "cls"))


DECLARED = declared_hooks()
DOCUMENTED = documented_hooks(PAGE.read_text(encoding="utf-8"))


def test_the_scan_finds_the_hookspecs() -> None:
    assert {"register_commands", "memory_clear", "history_changed"} <= set(DECLARED)
    assert len(published_hookspec_modules()) >= 2


def test_every_hookspec_has_its_section() -> None:
    missing = sorted(set(DECLARED) - set(DOCUMENTED))
    assert not missing, f"hookspecs without a section on {PAGE.name}: {missing}"


def test_the_page_documents_no_unknown_hook() -> None:
    unknown = sorted(set(DOCUMENTED) - set(DECLARED))
    assert not unknown, f"{PAGE.name} documents hooks nobody declares: {unknown}"


def test_each_section_matches_its_hookspec() -> None:
    wrong = []
    for name, spec in sorted(DECLARED.items()):
        if name not in DOCUMENTED:
            continue
        package, args = DOCUMENTED[name]
        declared_in = spec.__module__.split(".")[0]
        if package != declared_in:
            wrong.append(f"{name}: under {package!r}, declared by {declared_in!r}")
        if args != spec_arguments(spec):
            wrong.append(f"{name}: documented ({', '.join(args)}), declared {spec_arguments(spec)}")
    assert not wrong, "\n".join(wrong)
