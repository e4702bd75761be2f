"""Every method a contract asks for carries its rules where an implementer reads them.

A backend or provider author reads the Protocol (or the backend base) in their editor before
any page, so each public method of every contract protocol has a docstring (the summary of
its section on the reference page), and each protocol names the docs page that holds the
rules in full. The protocols are found, not listed: every Protocol class defined in a module
that defines the protocol of a capability a contract exports (so a contract's optional groups
come along), plus the memory backend base and its optional-group mixins.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

from aalis_core import Capability

ROOT = Path(__file__).resolve().parents[1]


def _contract_packages() -> list[str]:
    return [p.parent.name for p in sorted((ROOT / "contracts").glob("*/aalis_*/__init__.py"))]


def _protocol_classes() -> list[type]:
    modules: dict[str, None] = {}
    for name in _contract_packages():
        package = importlib.import_module(name)
        # The public names, loaded (a package re-exports lazily: vars() holds only used ones).
        for value in (getattr(package, public) for public in package.__all__):
            if isinstance(value, Capability):
                modules[value.protocol.__module__] = None
    classes: list[type] = []
    for module_name in modules:
        module = sys.modules[module_name]
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module_name
                and getattr(value, "_is_protocol", False)
            ):
                classes.append(value)
    from aalis_api_memory import OPTIONAL_MIXINS, MemoryBackend

    return [*classes, MemoryBackend, *OPTIONAL_MIXINS]


def _own_public_methods(cls: type) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) or isinstance(value, property):
            found.append((name, value))
    return found


def _doc(value: object) -> str:
    if isinstance(value, property):
        return (value.__doc__ or (value.fget.__doc__ if value.fget else None) or "").strip()
    return (getattr(value, "__doc__", None) or "").strip()


CLASSES = _protocol_classes()
METHODS = [
    (f"{cls.__module__}.{cls.__qualname__}.{name}", value)
    for cls in CLASSES
    for name, value in _own_public_methods(cls)
]


def test_the_scan_finds_every_contract() -> None:
    found = {".".join(qualified.rsplit(".", 2)[-2:]) for qualified, _ in METHODS}
    assert {
        "MemoryService.save_message",
        "MemoryService.commit_metadata",
        "FullHistory.count_history",
        "MemoryBackend.get_history",
        "WithLeases.acquire_lease",
        "VectorStore.upsert",
        "DroppedSessions.acknowledge_dropped",
        "Recall.recall",
        "Embedder.embed_query",
        "Embedder.model_id",
        "ChatModel.chat",
        "RelationService.retract",
        "CompressionService.compress",
    } <= found


@pytest.mark.parametrize(("qualified", "method"), METHODS, ids=[q for q, _ in METHODS])
def test_every_contract_method_has_a_docstring(qualified: str, method: object) -> None:
    assert _doc(method), f"{qualified} has no docstring: summarise its reference section"


@pytest.mark.parametrize("cls", CLASSES, ids=[c.__qualname__ for c in CLASSES])
def test_every_contract_names_its_reference_page(cls: type) -> None:
    """The class or its module points at an existing docs page (never at the spec)."""
    text = f"{cls.__doc__ or ''}\n{sys.modules[cls.__module__].__doc__ or ''}"
    pages = re.findall(r"docs/[\w./-]+\.md", text)
    assert pages, f"{cls.__qualname__}: no docs/... page named in its or its module's docstring"
    for page in pages:
        assert (ROOT / page).is_file(), f"{cls.__qualname__} names a missing page: {page}"
