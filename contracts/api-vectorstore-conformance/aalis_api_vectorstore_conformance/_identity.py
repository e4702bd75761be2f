"""The kit's identity cases: a vector is keyed on its message id, never on
``(session, timestamp, role)``, because two messages of one session may share a
millisecond and a role (docs/recall.md, "Identity and the recall check")."""

from __future__ import annotations

import inspect
from typing import TypeVar

import pytest
from aalis_api_vectorstore import VectorStore

from aalis_api_vectorstore_conformance._support import MODEL, T0, rec, scope, seeded_vector

C = TypeVar("C", bound=type)


def conformance(cls: C) -> C:
    """Mark every async test of ``cls`` for pytest-asyncio."""
    for name, value in list(vars(cls).items()):
        if name.startswith("test_") and inspect.iscoroutinefunction(value):
            setattr(cls, name, pytest.mark.asyncio(value))
    return cls


def _pair() -> tuple[list[float], list[float]]:
    return seeded_vector("bob"), seeded_vector("carol")


@conformance
class IdentityCases:
    """Two messages of one millisecond are two vectors, found, deleted and listed apart."""

    async def test_two_messages_of_one_millisecond_are_two_vectors(
        self, vectorstore: VectorStore
    ) -> None:
        bob, carol = _pair()
        await vectorstore.upsert(
            [
                rec("g", 1, bob, text="Bob: my PIN hint is the dog", message_id="m-bob"),
                rec("g", 1, carol, text="Carol: I am vegan", message_id="m-carol"),
            ]
        )
        assert (await vectorstore.stats()).counts == {MODEL: 2}
        (hit,) = await vectorstore.search(carol, 1, scope(["g"]))
        assert (hit.message_id, hit.text, hit.timestamp) == ("m-carol", "Carol: I am vegan", T0 + 1)
        (hit,) = await vectorstore.search(bob, 1, scope(["g"]))
        assert (hit.message_id, hit.text) == ("m-bob", "Bob: my PIN hint is the dog")

    async def test_an_upsert_replaces_by_message_id(self, vectorstore: VectorStore) -> None:
        old, new = _pair()
        await vectorstore.upsert([rec("g", 1, old, text="old", message_id="m1")])
        await vectorstore.upsert([rec("g", 1, new, text="new", message_id="m1")])
        await vectorstore.upsert([rec("g", 1, new, text="other", message_id="m2")])
        assert (await vectorstore.stats()).total == 2
        hits = await vectorstore.search(new, 5, scope(["g"]))
        assert sorted((h.message_id, h.text) for h in hits) == [("m1", "new"), ("m2", "other")]

    async def test_delete_by_id_keeps_the_other_message_of_the_millisecond(
        self, vectorstore: VectorStore
    ) -> None:
        bob, carol = _pair()
        await vectorstore.upsert(
            [
                rec("g", 1, bob, message_id="m-bob"),
                rec("g", 1, carol, message_id="m-carol"),
                rec("h", 1, carol, message_id="m-other"),
            ]
        )
        assert await vectorstore.delete("h", ["m-bob"]) == 0  # another session's id
        assert await vectorstore.delete("g", ["m-bob", "m-unknown"]) == 1
        hits = await vectorstore.search(bob, 5, scope(None))
        assert sorted(h.message_id for h in hits) == ["m-carol", "m-other"]

    async def test_delete_by_timestamps_takes_every_message_of_the_millisecond(
        self, vectorstore: VectorStore
    ) -> None:
        bob, carol = _pair()
        await vectorstore.upsert(
            [
                rec("g", 1, bob, message_id="m-bob"),
                rec("g", 1, carol, message_id="m-carol", role="assistant"),
                rec("g", 2, carol, message_id="m-later"),
            ]
        )
        assert await vectorstore.delete("g", timestamps=[T0 + 1]) == 2
        assert [h.message_id for h in await vectorstore.search(bob, 5, scope(None))] == ["m-later"]

    async def test_delete_refuses_ids_and_timestamps_together(
        self, vectorstore: VectorStore
    ) -> None:
        await vectorstore.upsert([rec("g", 1, seeded_vector(1), message_id="m1")])
        with pytest.raises(ValueError, match="not both"):
            await vectorstore.delete("g", ["m1"], timestamps=[T0 + 1])
        with pytest.raises(TypeError):
            await vectorstore.delete("g", "m1")
        with pytest.raises(TypeError):
            await vectorstore.delete("g", ["m1", 7])  # type: ignore[list-item]
        assert (await vectorstore.stats()).total == 1

    async def test_a_record_needs_a_message_id(self) -> None:
        with pytest.raises(ValueError, match="message_id"):
            rec("g", 1, seeded_vector(1), message_id="")
        with pytest.raises(TypeError):
            rec("g", 1, seeded_vector(1), message_id=7)  # type: ignore[arg-type]

    async def test_entries_and_sessions_list_what_is_held(self, vectorstore: VectorStore) -> None:
        bob, carol = _pair()
        assert await vectorstore.sessions() == []
        assert await vectorstore.entries("g") == []
        await vectorstore.upsert(
            [
                rec("g", 2, bob, text="later", message_id="m-c"),
                rec("g", 1, carol, text="carol", message_id="m-b", model_id="other-model"),
                rec("g", 1, bob, text="bob", message_id="m-a", role="assistant"),
                rec("%", 1, bob, message_id="m-pct"),
            ]
        )
        listed = await vectorstore.entries("g")
        assert [(e.message_id, e.timestamp, e.role, e.model_id, e.text) for e in listed] == [
            ("m-a", T0 + 1, "assistant", MODEL, "bob"),
            ("m-b", T0 + 1, "user", "other-model", "carol"),
            ("m-c", T0 + 2, "user", MODEL, "later"),
        ]
        assert all(e.session_id == "g" for e in listed)
        assert await vectorstore.sessions() == ["%", "g"]
        await vectorstore.delete("g")
        assert await vectorstore.sessions() == ["%"]


__all__ = ["IdentityCases", "conformance"]
