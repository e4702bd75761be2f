"""The kit keeps its promise: an optional method a backend declares but lacks FAILS its tests.

Each case takes the in-memory backend, takes one optional method away (set to ``None`` on a
subclass, or a wrapper that does not forward it), and runs a kit mixin on it in a separate
pytest process twice: once declaring the method's group in ``implements`` (the run must
fail, for exactly the tests that need the method, plus the declaration test), once without
the declaration (those same tests skip, naming the method, and nothing fails). A third class
runs the intact store, so a test the backend fails on its own is left out of the comparison:
what is asserted is what removing the method changes.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import OPTIONAL_METHODS, FullHistory, MetadataKeys, group_of
from aalis_api_memory_conformance import ConformanceBase, MemoryServiceConformance

pytest.importorskip("aalis_plugin_memory_inmemory", reason="the kit runs on memory-inmemory")

DECLARED_TEST = "test_declared_optional_groups_are_implemented"

STORES = '''
from typing import Any

from aalis_plugin_memory_inmemory import InMemoryMemory


class WithoutCount(InMemoryMemory):
    """The real store with one method of FullHistory taken away."""

    count_history = None


class WithoutSessions:
    """The real store behind a wrapper that forwards everything but list_sessions."""

    def __init__(self) -> None:
        self._inner = InMemoryMemory()

    def __getattr__(self, name: str) -> Any:
        if name == "list_sessions":
            raise AttributeError(name)
        return getattr(self._inner, name)
'''

KIT = """
import pytest_asyncio
from aalis_api_memory import OPTIONAL_GROUPS
from aalis_api_memory_conformance import {mixin}

from aalis_plugin_memory_inmemory import InMemoryMemory
from stores import {store}


class TestIntact({mixin}):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self):
        yield InMemoryMemory()


class TestDeclared({mixin}):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self):
        yield {store}()


class TestUndeclared({mixin}):
    # Every group but the one the store lacks a method of.
    implements = {{g for g in OPTIONAL_GROUPS if g.__name__ != "{group}"}}

    @pytest_asyncio.fixture
    async def memory(self):
        yield {store}()
"""


Outcomes = dict[str, dict[str, tuple[str, str]]]


def run_kit(tmp_path: Path, **fields: str) -> Outcomes:
    """Run the generated kit file; outcome and message per test, by class then test name."""
    (tmp_path / "stores.py").write_text(STORES, encoding="utf-8")
    (tmp_path / "test_generated_kit.py").write_text(KIT.format(**fields), encoding="utf-8")
    report = tmp_path / "report.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-o",
            "asyncio_mode=strict",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "--rootdir",
            str(tmp_path),
            f"--junitxml={report}",
            "test_generated_kit.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    outcomes: Outcomes = {"TestIntact": {}, "TestDeclared": {}, "TestUndeclared": {}}
    for case in ET.parse(report).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        name = case.get("name", "")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = child.tag, child.get("message", "")
        outcomes[cls][name] = (outcome, message)
    return outcomes


@pytest.mark.parametrize(
    ("store", "method", "mixin"),
    [
        ("WithoutCount", "count_history", "HistoryConformance"),
        ("WithoutSessions", "list_sessions", "ExtensionsConformance"),
    ],
)
def test_a_declared_method_that_is_missing_fails_the_kit(
    tmp_path: Path, store: str, method: str, mixin: str
) -> None:
    outcomes = run_kit(tmp_path, group=group_of(method).__name__, mixin=mixin, store=store)
    intact = outcomes["TestIntact"]
    assert intact, outcomes
    assert not [name for name, (outcome, _) in intact.items() if outcome == "skipped"]
    # Tests the intact backend does not pass say nothing about the removed method.
    broken = {name for name, (outcome, _) in intact.items() if outcome != "passed"}
    declared, undeclared = (
        {name: result for name, result in outcomes[cls].items() if name not in broken}
        for cls in ("TestDeclared", "TestUndeclared")
    )
    assert declared, outcomes
    assert undeclared, outcomes

    # Without the declaration: the method's tests skip, naming it, and nothing fails.
    skipped = {name for name, (outcome, message) in undeclared.items() if outcome == "skipped"}
    assert skipped, f"no test of {mixin} needs {method}()"
    assert all(method in undeclared[name][1] for name in skipped)
    assert not [
        name
        for name, (outcome, _) in undeclared.items()
        if outcome != "passed" and name not in skipped
    ]
    assert undeclared[DECLARED_TEST][0] == "passed"

    # Declared: exactly those tests fail (not skip), with a message naming the method.
    failed = {name for name, (outcome, _) in declared.items() if outcome == "failure"}
    assert failed == skipped | {DECLARED_TEST}
    assert all(method in declared[name][1] for name in failed)
    assert not [name for name, (outcome, _) in declared.items() if outcome == "skipped"]


def test_declarations_are_checked() -> None:
    class Unknown(ConformanceBase):
        implements: Any = {int}

    class Typo(ConformanceBase):
        implements: Any = "everything"

    for cls in (Unknown, Typo):
        with pytest.raises(TypeError, match="implements"):
            cls.declared_groups()


def test_what_a_declaration_covers() -> None:
    class Nothing(MemoryServiceConformance):
        pass

    class Some(MemoryServiceConformance):
        implements = {FullHistory, MetadataKeys}

    class Everything(MemoryServiceConformance):
        implements = "all"

    assert Nothing.declared_methods() == frozenset()
    assert Some.declared_groups() == (FullHistory, MetadataKeys)
    assert Some.declared_methods() == {
        "count_history",
        "get_full_history",
        "list_metadata_keys",
        "list_namespaces",
    }
    assert Everything.declared_methods() == frozenset(OPTIONAL_METHODS)
