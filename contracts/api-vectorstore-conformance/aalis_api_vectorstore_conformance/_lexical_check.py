"""The kit's cases for ``lexical_check`` / ``lexical_repair`` (the optional
``LexicalIndexCheck`` part of the lexical group; docs/recall.md, "Lexical leg").

A store without the methods skips them, naming the method. The damage cases need a way to
break a store's lexical index behind its back, which only the store's own tests know (an
FTS row deleted, a ``tsvector`` emptied): a store's kit subclass overrides
``damage_lexical``; without it those cases skip, saying so.
"""

from __future__ import annotations

from typing import Any

import pytest
from aalis_api_vectorstore import LexicalDrift, VectorStore

from aalis_api_vectorstore_conformance._identity import conformance
from aalis_api_vectorstore_conformance._support import rec, scope, seeded_vector

TEXTS = (
    "the refund for order AX-55812-K was approved",
    "王磊明天来公司拿合同",
    "parse_refund_window breaks on leap days",
)


def _method(store: VectorStore, name: str) -> Any:
    method = getattr(store, name, None)
    if method is None:
        pytest.skip(
            f"optional method not implemented by this store: {name} ({type(store).__name__})"
        )
    return method


async def check(store: VectorStore, session_id: str | None = None) -> LexicalDrift:
    drift: LexicalDrift = await _method(store, "lexical_check")(session_id)
    return drift


async def repair(store: VectorStore, session_id: str | None = None) -> LexicalDrift:
    fixed: LexicalDrift = await _method(store, "lexical_repair")(session_id)
    return fixed


async def _seed(store: VectorStore) -> None:
    await store.upsert(
        [rec("s1", i, seeded_vector(f"c{i}"), text=text) for i, text in enumerate(TEXTS)]
        + [rec("s2", 9, seeded_vector("c9"), text="order AX-55812-K again")]
    )


@conformance
class LexicalIndexCheckConformance:
    """The rules of ``lexical_check`` and ``lexical_repair``; included in the kit."""

    async def damage_lexical(self, store: VectorStore, message_id: str, how: str) -> None:
        """Break the lexical entry of ``message_id`` behind the store's back: ``how`` is
        ``"missing"`` (the entry removed) or ``"stale"`` (the entry holds other terms).
        Override in a store's kit subclass; the damage cases skip without it."""
        pytest.skip(
            f"{type(self).__name__} does not override damage_lexical: the damage cases of "
            "lexical_check need a way to break this store's lexical index"
        )

    async def test_a_store_kept_by_its_own_methods_has_no_drift(
        self, vectorstore: VectorStore
    ) -> None:
        await _seed(vectorstore)
        assert await check(vectorstore) == LexicalDrift()
        await vectorstore.upsert([rec("s1", 0, seeded_vector("c0"), text="now about INV-7")])
        await vectorstore.delete("s1", ["s1/1/user"])
        for session in (None, "s1", "s2", "nobody"):
            drift = await check(vectorstore, session)
            assert not drift, (session, drift)
            assert drift.count == 0
        await vectorstore.delete_all()
        assert await check(vectorstore) == LexicalDrift()

    async def test_repairing_a_sound_index_changes_nothing(self, vectorstore: VectorStore) -> None:
        await _seed(vectorstore)
        assert await repair(vectorstore) == LexicalDrift()
        assert await repair(vectorstore, "s1") == LexicalDrift()
        hits = await _method(vectorstore, "lexical_search")("AX-55812-K", 5, scope(["s1"]))
        assert [h.text for h in hits] == [TEXTS[0]]

    async def test_a_session_id_that_is_not_a_str_is_refused(
        self, vectorstore: VectorStore
    ) -> None:
        with pytest.raises(TypeError):
            await check(vectorstore, 42)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await repair(vectorstore, b"s1")  # type: ignore[arg-type]

    @pytest.mark.parametrize("how", ["missing", "stale"])
    async def test_a_damaged_entry_is_found_and_repaired(
        self, vectorstore: VectorStore, how: str
    ) -> None:
        await _seed(vectorstore)
        await self.damage_lexical(vectorstore, "s1/0/user", how)
        wanted = (
            LexicalDrift(missing=["s1/0/user"])
            if how == "missing"
            else LexicalDrift(stale=["s1/0/user"])
        )
        assert await check(vectorstore, "s1") == wanted
        assert await check(vectorstore) == wanted
        assert await check(vectorstore, "s2") == LexicalDrift()  # other sessions untouched
        assert await repair(vectorstore, "s1") == wanted
        assert await check(vectorstore) == LexicalDrift()
        hits = await _method(vectorstore, "lexical_search")("AX-55812-K", 5, scope(["s1"]))
        assert [h.text for h in hits] == [TEXTS[0]]


__all__ = ["LexicalIndexCheckConformance"]
