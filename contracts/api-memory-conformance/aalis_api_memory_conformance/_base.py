"""The fixture, hooks and declarations a backend provides to the conformance kit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from typing import Any, ClassVar, Literal

import pytest
import pytest_asyncio
from aalis_api_memory import (
    OPTIONAL_GROUPS,
    FullMemoryService,
    MemoryService,
    group_methods,
    group_of,
)

from aalis_api_memory_conformance._support import maybe_await

#: What a backend's test class may put in ``implements``: a collection of optional groups
#: (``FullHistory``, ``Rewrite``, ...; ``FullMemoryService`` counts as all of them), or
#: ``"all"``.
Declaration = Collection[type[MemoryService]] | Literal["all"]


class ConformanceBase:
    """What every conformance mixin relies on; ``MemoryServiceConformance`` subclasses it.

    A backend's test class overrides:

    * ``memory`` (required): a ``pytest_asyncio.fixture`` yielding a fresh, empty store
      (and closing it afterwards). The store may expose ``range_query_limit`` and
      ``cross_session_max_limit`` attributes; the kit reads them (defaults 500 and 1000).
    * ``implements`` (a class attribute, default none): the optional groups the backend
      promises, e.g. ``implements = {FullHistory, Rewrite}``, or ``implements = "all"``.
      A test of a declared group whose method the store lacks FAILS, naming the method;
      a test of an undeclared group the store lacks skips with a reason.
    * ``corrupt_metadata(memory, namespace, key, raw_text)`` (optional, sync or async):
      store ``raw_text`` as the entry's data *as is*, bypassing validation, so the kit can
      check how unreadable entries are handled. Without it those tests skip with a reason.
    """

    implements: ClassVar[Declaration] = ()

    @pytest_asyncio.fixture
    async def memory(self) -> AsyncIterator[Any]:
        pytest.fail(
            f"{type(self).__name__} must override the `memory` fixture with a "
            "@pytest_asyncio.fixture that yields a fresh store"
        )
        yield None  # pragma: no cover

    @classmethod
    def declared_groups(cls) -> tuple[type[MemoryService], ...]:
        """The optional groups ``implements`` declares, in ``OPTIONAL_GROUPS`` order."""
        declared = cls.implements
        if declared == "all":
            return OPTIONAL_GROUPS
        if isinstance(declared, str) or not isinstance(declared, Collection):
            raise TypeError(
                f"{cls.__name__}.implements must be a collection of optional groups or "
                f"'all', got {declared!r}"
            )
        names: set[str] = set()
        for group in declared:
            if group is not FullMemoryService and group not in OPTIONAL_GROUPS:
                known = ", ".join(g.__name__ for g in OPTIONAL_GROUPS)
                raise TypeError(
                    f"{cls.__name__}.implements lists {group!r}, which is not an optional "
                    f"group of the memory contract ({known}, or FullMemoryService)"
                )
            names.update(group_methods(group))
        return tuple(g for g in OPTIONAL_GROUPS if set(group_methods(g)) <= names)

    @classmethod
    def declared_methods(cls) -> frozenset[str]:
        """Every optional method name the declared groups hold."""
        return frozenset(name for group in cls.declared_groups() for name in group_methods(group))

    def require(self, memory: object, *methods: str) -> None:
        """Let the calling test run only when the store has ``methods``.

        A missing method of a group the class declares in ``implements`` fails the test
        (the backend promised it); a missing undeclared one skips it with the reason.
        """
        missing = [method for method in methods if not callable(getattr(memory, method, None))]
        if not missing:
            return
        declared = [method for method in missing if method in self.declared_methods()]
        if declared:
            groups = sorted({group_of(method).__name__ for method in declared})
            pytest.fail(
                f"{type(self).__name__} declares {', '.join(groups)} in `implements`, but the "
                f"store has no callable {', '.join(f'{m}()' for m in declared)}",
                pytrace=False,
            )
        pytest.skip(f"optional method(s) not implemented by this backend: {', '.join(missing)}")

    @pytest.mark.asyncio
    async def test_declared_optional_groups_are_implemented(self, memory: object) -> None:
        """The declaration itself: every method of every declared group is there."""
        missing = sorted(
            (group_of(name).__name__, name)
            for name in self.declared_methods()
            if not callable(getattr(memory, name, None))
        )
        if missing:
            listed = ", ".join(f"{group}.{name}()" for group, name in missing)
            pytest.fail(
                f"{type(self).__name__} declares these in `implements`, but the store lacks "
                f"them: {listed}",
                pytrace=False,
            )

    def corrupt_metadata(self, memory: Any, namespace: str, key: str, raw_text: str) -> Any:
        """Write ``raw_text`` as the stored data of ``namespace``/``key``, unvalidated."""
        raise NotImplementedError

    async def write_raw_metadata(
        self, memory: Any, namespace: str, key: str, raw_text: str
    ) -> None:
        """Call the backend's ``corrupt_metadata`` hook, or skip when it has none."""
        if type(self).corrupt_metadata is ConformanceBase.corrupt_metadata:
            pytest.skip(
                "the backend's test class does not override corrupt_metadata(), so the kit "
                "cannot create an unreadable metadata entry"
            )
        await maybe_await(self.corrupt_metadata(memory, namespace, key, raw_text))


__all__ = ["ConformanceBase", "Declaration"]
