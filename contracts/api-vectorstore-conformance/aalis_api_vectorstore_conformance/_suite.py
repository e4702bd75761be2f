"""The rules of the ``VectorStore`` contract, as tests (see docs/recall.md)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Sequence

import pytest
import pytest_asyncio
from aalis_api_vectorstore import DimensionMismatch, VectorHit, VectorKey, VectorRecord, VectorStore

from aalis_api_vectorstore_conformance._identity import IdentityCases, conformance
from aalis_api_vectorstore_conformance._lexical import LexicalSearchConformance
from aalis_api_vectorstore_conformance._lexical_check import LexicalIndexCheckConformance
from aalis_api_vectorstore_conformance._support import (
    MODEL,
    T0,
    brute_force,
    cosine,
    near,
    rec,
    scope,
    seeded_vector,
)

#: Session ids, platforms, roles and texts that must stay plain data in every query language.
HOSTILE = (
    "%",
    "_",
    "*",
    "' OR '1'='1",
    "'; DROP TABLE vectors; --",
    '{"$ne": null}',
    "nul\x00inside",
    "emoji 🎉 中文 \u202eRTL",
    "back\\slash",
    "",
)


_conformance = conformance


def keys(hits: Sequence[VectorHit]) -> list[VectorKey]:
    return [hit.key for hit in hits]


def sessions_of(hits: Sequence[VectorHit]) -> set[str]:
    return {hit.session_id for hit in hits}


@_conformance
class VectorStoreConformance(IdentityCases, LexicalSearchConformance, LexicalIndexCheckConformance):
    """Every rule of the ``VectorStore`` contract; subclass it and override ``vectorstore``."""

    #: False for a store whose search is approximate (HNSW): ``test_search_is_exact`` then
    #: requires a recall of at least ``min_recall`` against brute force.
    exact: bool = True
    min_recall: float = 0.9
    #: Score tolerance against a float64 cosine (float32 storage, half-precision indexes).
    score_tolerance: float = 1e-3

    @pytest_asyncio.fixture
    async def vectorstore(self) -> AsyncIterator[VectorStore]:
        pytest.fail(
            f"{type(self).__name__} must override the `vectorstore` fixture with a "
            "@pytest_asyncio.fixture that yields a fresh, empty store"
        )
        yield  # pragma: no cover

    # -- basics --------------------------------------------------------------------------------

    async def test_an_empty_store_finds_nothing(self, vectorstore: VectorStore) -> None:
        assert await vectorstore.search(seeded_vector(1), 5, scope(None)) == []
        assert (await vectorstore.stats()).total == 0

    async def test_search_ranks_by_cosine_with_true_scores(self, vectorstore: VectorStore) -> None:
        target = seeded_vector("target")
        records = [
            rec("s1", 1, near(target, 1, 0.05)),
            rec("s1", 2, near(target, 2, 0.5)),
            rec("s1", 3, near(target, 3, 2.0)),
            rec("s1", 4, [-x for x in target]),
        ]
        assert await vectorstore.upsert(records) == 4
        hits = await vectorstore.search(target, 4, scope(["s1"]))
        assert keys(hits) == [r.key for r in records]
        for hit, record in zip(hits, records, strict=True):
            assert isinstance(hit.score, float)
            assert math.isclose(
                hit.score, cosine(target, record.vector), abs_tol=self.score_tolerance
            )
        assert hits[-1].score == pytest.approx(-1.0, abs=self.score_tolerance)

    async def test_hits_carry_every_field_of_the_record(self, vectorstore: VectorStore) -> None:
        record = rec(
            "s1",
            7,
            seeded_vector(7),
            role="assistant",
            text="the train leaves at nine",
            platform="qq",
            user_id="u-42",
        )
        await vectorstore.upsert([record])
        (hit,) = await vectorstore.search(record.vector, 1, scope(["s1"]))
        assert (hit.session_id, hit.timestamp, hit.role) == ("s1", T0 + 7, "assistant")
        assert (hit.model_id, hit.text, hit.platform, hit.user_id) == (
            MODEL,
            "the train leaves at nine",
            "qq",
            "u-42",
        )

    async def test_k_limits_the_hits_and_zero_returns_none(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", i, seeded_vector(i)) for i in range(10)])
        assert len(await vectorstore.search(seeded_vector(0), 3, scope(["s1"]))) == 3
        assert await vectorstore.search(seeded_vector(0), 0, scope(["s1"])) == []
        assert len(await vectorstore.search(seeded_vector(0), 50, scope(["s1"]))) == 10

    async def test_an_empty_batch_writes_nothing(self, vectorstore: VectorStore) -> None:
        assert await vectorstore.upsert([]) == 0
        assert (await vectorstore.stats()).total == 0

    async def test_upsert_of_a_stored_key_replaces_it(self, vectorstore: VectorStore) -> None:
        old, new = seeded_vector("old"), seeded_vector("new")
        await vectorstore.upsert([rec("s1", 1, old, text="old text"), rec("s1", 2, old)])
        await vectorstore.upsert([rec("s1", 1, new, text="new text")])
        assert (await vectorstore.stats()).counts == {MODEL: 2}
        (hit,) = await vectorstore.search(new, 1, scope(["s1"]))
        assert (hit.timestamp, hit.text) == (T0 + 1, "new text")
        assert hit.score == pytest.approx(1.0, abs=self.score_tolerance)
        texts = [h.text for h in await vectorstore.search(old, 5, scope(["s1"]))]
        assert "old text" not in texts

    async def test_a_key_twice_in_one_batch_keeps_the_last(self, vectorstore: VectorStore) -> None:
        first, last = seeded_vector("first"), seeded_vector("last")
        await vectorstore.upsert(
            [rec("s1", 1, first, text="first"), rec("s1", 1, last, text="last")]
        )
        assert (await vectorstore.stats()).counts == {MODEL: 1}
        (hit,) = await vectorstore.search(first, 5, scope(["s1"]))
        assert hit.text == "last"
        assert math.isclose(hit.score, cosine(first, last), abs_tol=self.score_tolerance)

    async def test_one_timestamp_in_two_roles_is_two_records(
        self, vectorstore: VectorStore
    ) -> None:
        await vectorstore.upsert(
            [
                rec("s1", 1, seeded_vector(1), role="user"),
                rec("s1", 1, seeded_vector(2), role="assistant"),
            ]
        )
        hits = await vectorstore.search(seeded_vector(1), 5, scope(["s1"]))
        assert {hit.role for hit in hits} == {"user", "assistant"}

    async def test_a_replacement_in_another_model_moves_the_record(
        self, vectorstore: VectorStore
    ) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1), model_id="old-model")])
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1), model_id="new-model")])
        assert (await vectorstore.stats()).counts == {"new-model": 1}
        assert (
            await vectorstore.search(seeded_vector(1), 5, scope(None, model_id="old-model")) == []
        )

    async def test_vectors_need_not_be_unit_length(self, vectorstore: VectorStore) -> None:
        base = seeded_vector("base")
        await vectorstore.upsert(
            [
                rec("s1", 1, [100.0 * x for x in near(base, 1, 0.1)]),
                rec("s1", 2, [0.01 * x for x in near(base, 2, 1.0)]),
            ]
        )
        hits = await vectorstore.search([3.0 * x for x in base], 2, scope(["s1"]))
        assert [hit.timestamp for hit in hits] == [T0 + 1, T0 + 2]
        assert hits[0].score <= 1.0 + self.score_tolerance

    async def test_an_all_zero_vector_scores_zero(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, [0.0] * 16), rec("s1", 2, seeded_vector(2))])
        hits = await vectorstore.search(seeded_vector(2), 2, scope(["s1"]))
        assert [h.timestamp for h in hits] == [T0 + 2, T0 + 1]
        assert hits[1].score == pytest.approx(0.0, abs=self.score_tolerance)
        zero_query = await vectorstore.search([0.0] * 16, 2, scope(["s1"]))
        assert len(zero_query) == 2
        assert all(h.score == pytest.approx(0.0, abs=self.score_tolerance) for h in zero_query)

    async def test_vectors_may_be_tuples_or_lists_of_ints(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, (1, 0, 0, 0)), rec("s1", 2, [0, 1, 0, 0])])
        (hit,) = await vectorstore.search((1.0, 0.0, 0.0, 0.0), 1, scope(["s1"]))
        assert hit.timestamp == T0 + 1

    async def test_search_is_exact(self, vectorstore: VectorStore) -> None:
        records = [
            rec(f"s{i % 7}", i, seeded_vector(f"exact-{i}"), platform=("a", "b")[i % 2])
            for i in range(1200)
        ]
        await vectorstore.upsert(records)
        for q in range(3):
            query = seeded_vector(f"query-{q}")
            where = scope(["s1", "s2", "s3"], platform="a")
            expected = brute_force(records, query, 10, where)
            hits = await vectorstore.search(query, 10, where)
            assert len(hits) == 10
            if self.exact:
                assert keys(hits) == [key for key, _ in expected]
            else:
                found = set(keys(hits)) & {key for key, _ in expected}
                assert len(found) >= self.min_recall * 10

    # -- scope -------------------------------------------------------------------------------

    async def test_a_better_match_outside_the_sessions_is_never_returned(
        self, vectorstore: VectorStore
    ) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [
                rec("other", 1, query, text="the other session's exact match"),
                rec("mine", 2, near(query, 2, 3.0)),
            ]
        )
        hits = await vectorstore.search(query, 5, scope(["mine"]))
        assert sessions_of(hits) == {"mine"}
        hits = await vectorstore.search(query, 5, scope(None))
        assert sessions_of(hits) == {"mine", "other"}

    async def test_an_empty_session_set_matches_nothing(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1))])
        assert await vectorstore.search(seeded_vector(1), 5, scope([])) == []

    async def test_excluded_sessions_are_never_returned(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [rec("a", 1, query), rec("b", 2, near(query, 1, 1.0)), rec("c", 3, seeded_vector(3))]
        )
        hits = await vectorstore.search(query, 5, scope(None, exclude=["a"]))
        assert sessions_of(hits) == {"b", "c"}
        assert await vectorstore.search(query, 5, scope(["a"], exclude=["a"])) == []

    async def test_platform_filter_matches_exactly(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [
                rec("s1", 1, query, platform="discord"),
                rec("s1", 2, query, platform=None),
                rec("s1", 3, near(query, 3, 2.0), platform="qq"),
                rec("s1", 4, query, platform="QQ"),
            ]
        )
        hits = await vectorstore.search(query, 5, scope(None, platform="qq"))
        assert [hit.timestamp for hit in hits] == [T0 + 3]

    async def test_user_filter_matches_exactly(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [
                rec("s1", 1, query, user_id="alice"),
                rec("s2", 2, near(query, 2, 2.0), user_id="bob"),
                rec("s3", 3, query, user_id=None),
            ]
        )
        hits = await vectorstore.search(query, 5, scope(None, user_id="bob"))
        assert [(hit.session_id, hit.user_id) for hit in hits] == [("s2", "bob")]

    async def test_role_filter(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [
                rec("s1", 1, query, role="assistant"),
                rec("s1", 2, near(query, 2, 2.0), role="user"),
            ]
        )
        hits = await vectorstore.search(query, 5, scope(["s1"], roles=["user"]))
        assert [hit.role for hit in hits] == ["user"]
        assert await vectorstore.search(query, 5, scope(["s1"], roles=[])) == []

    async def test_models_are_never_mixed(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert(
            [
                rec("s1", 1, query, model_id="model-a"),
                rec("s1", 2, near(query, 2, 2.0), model_id="model-b"),
            ]
        )
        hits = await vectorstore.search(query, 5, scope(["s1"], model_id="model-b"))
        assert [(hit.timestamp, hit.model_id) for hit in hits] == [(T0 + 2, "model-b")]
        assert await vectorstore.search(query, 5, scope(["s1"], model_id="model-c")) == []

    async def test_models_of_different_widths_live_side_by_side(
        self, vectorstore: VectorStore
    ) -> None:
        await vectorstore.upsert(
            [
                rec("s1", 1, seeded_vector(1, 8), model_id="narrow"),
                rec("s1", 2, seeded_vector(2, 24), model_id="wide"),
                rec("s1", 3, seeded_vector(3, 24), model_id="wide"),
            ]
        )
        stats = await vectorstore.stats()
        assert [(m.model_id, m.count, m.dim) for m in stats.models] == [
            ("narrow", 1, 8),
            ("wide", 2, 24),
        ]
        assert stats.total == 3
        assert (
            len(await vectorstore.search(seeded_vector(2, 24), 5, scope(None, model_id="wide")))
            == 2
        )
        assert (
            len(await vectorstore.search(seeded_vector(1, 8), 5, scope(None, model_id="narrow")))
            == 1
        )

    async def test_k_hits_in_scope_on_skewed_data(self, vectorstore: VectorStore) -> None:
        # A crowd of near-perfect matches outside the scope: a store that ranks globally and
        # filters afterwards returns fewer than k here, which is the failure this rules out.
        query = seeded_vector("crowd-query", 32)
        crowd = [
            rec(
                f"crowd-{i % 40}",
                i,
                near(query, f"crowd-{i}", 0.05),
                platform="web",
                user_id=f"u{i % 9}",
            )
            for i in range(3000)
        ]
        rare = [
            rec("rare", 10_000 + i, seeded_vector(f"rare-{i}", 32), platform="irc", user_id="r")
            for i in range(12)
        ]
        await vectorstore.upsert(crowd)
        await vectorstore.upsert(rare)
        for where in (
            scope(["rare"]),
            scope(None, platform="irc"),
            scope(None, user_id="r"),
            scope(["rare", "crowd-1", "crowd-2"], exclude=["crowd-1", "crowd-2"]),
        ):
            hits = await vectorstore.search(query, 10, where)
            assert len(hits) == 10, f"{len(hits)} hits for {where}"
            assert sessions_of(hits) == {"rare"}
        hits = await vectorstore.search(query, 50, scope(["rare"]))
        assert len(hits) == 12

    async def test_filter_values_are_data_not_syntax(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        records = [
            rec(value, i, near(query, i, 0.5), platform=value or None, user_id=value)
            for i, value in enumerate(HOSTILE)
        ]
        records.append(rec("plain", 100, query, platform="plain", user_id="plain"))
        await vectorstore.upsert(records)
        for value in HOSTILE:
            hits = await vectorstore.search(query, 50, scope([value]))
            assert sessions_of(hits) == {value}
            hits = await vectorstore.search(query, 50, scope(None, user_id=value))
            assert sessions_of(hits) == {value}
            if value:
                hits = await vectorstore.search(query, 50, scope(None, platform=value))
                assert sessions_of(hits) == {value}
            hits = await vectorstore.search(query, 50, scope(None, exclude=[value]))
            assert value not in sessions_of(hits)
            assert len(hits) == len(records) - 1

    # -- dimensions and values -----------------------------------------------------------------

    async def test_a_wrong_width_raises_and_writes_nothing(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1, 16))])
        with pytest.raises(DimensionMismatch) as info:
            await vectorstore.upsert(
                [rec("s1", 2, seeded_vector(2, 16)), rec("s1", 3, seeded_vector(3, 17))]
            )
        assert (info.value.model_id, info.value.expected, info.value.got) == (MODEL, 16, 17)
        assert (await vectorstore.stats()).counts == {MODEL: 1}

    async def test_two_widths_of_one_model_in_a_batch_raise(self, vectorstore: VectorStore) -> None:
        with pytest.raises(DimensionMismatch):
            await vectorstore.upsert(
                [rec("s1", 1, seeded_vector(1, 8)), rec("s1", 2, seeded_vector(2, 9))]
            )
        assert (await vectorstore.stats()).total == 0

    async def test_a_query_of_the_wrong_width_raises(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1, 16))])
        with pytest.raises(DimensionMismatch):
            await vectorstore.search(seeded_vector(1, 15), 3, scope(["s1"]))

    @pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
    async def test_non_finite_values_raise_and_write_nothing(
        self, vectorstore: VectorStore, bad: float
    ) -> None:
        vector = seeded_vector(2, 16)
        vector[3] = bad
        with pytest.raises(ValueError, match=r"(?i)nan|infinite|finite"):
            await vectorstore.upsert([rec("s1", 1, seeded_vector(1, 16)), rec("s1", 2, vector)])
        assert (await vectorstore.stats()).total == 0
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1, 16))])
        with pytest.raises(ValueError, match=r"(?i)nan|infinite|finite"):
            await vectorstore.search(vector, 3, scope(["s1"]))

    # -- bad arguments -------------------------------------------------------------------------

    @pytest.mark.parametrize("bad", [-1, True, 1.5, 2.0])
    async def test_a_bad_k_raises_value_error(self, vectorstore: VectorStore, bad: object) -> None:
        with pytest.raises(ValueError, match="k must"):
            await vectorstore.search(seeded_vector(1), bad, scope(None))  # type: ignore[arg-type]

    async def test_a_k_of_the_wrong_type_raises_type_error(self, vectorstore: VectorStore) -> None:
        with pytest.raises(TypeError):
            await vectorstore.search(seeded_vector(1), "3", scope(None))  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [None, {"model_id": MODEL}, "s1"])
    async def test_search_without_a_scope_filter_is_refused(
        self, vectorstore: VectorStore, bad: object
    ) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1))])
        with pytest.raises(TypeError):
            await vectorstore.search(seeded_vector(1), 3, bad)  # type: ignore[arg-type]

    async def test_records_must_be_vector_records(self, vectorstore: VectorStore) -> None:
        good = rec("s1", 1, seeded_vector(1))
        with pytest.raises(TypeError):
            await vectorstore.upsert([good, {"session_id": "s1"}])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            await vectorstore.upsert(good)  # type: ignore[arg-type]
        assert (await vectorstore.stats()).total == 0

    async def test_delete_checks_its_arguments(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1))])
        with pytest.raises(TypeError):
            await vectorstore.delete(1)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await vectorstore.delete("s1", "12")
        with pytest.raises(TypeError):
            await vectorstore.delete("s1", [T0 + 1, "x"])  # type: ignore[list-item]
        assert (await vectorstore.stats()).total == 1

    # -- deletes -------------------------------------------------------------------------------

    async def test_delete_by_timestamps_removes_exactly_those(
        self, vectorstore: VectorStore
    ) -> None:
        v = seeded_vector(1)
        await vectorstore.upsert(
            [
                rec("s1", 1, v, role="user"),
                rec("s1", 1, v, role="assistant"),
                rec("s1", 2, v),
                rec("s1", 3, v),
                rec("s2", 1, v),
            ]
        )
        assert await vectorstore.delete("s1", timestamps=[T0 + 1, T0 + 3, T0 + 99]) == 3
        remaining = await vectorstore.search(v, 10, scope(None))
        assert sorted((h.session_id, h.timestamp) for h in remaining) == [
            ("s1", T0 + 2),
            ("s2", T0 + 1),
        ]
        assert await vectorstore.delete("s1", timestamps=[]) == 0
        assert await vectorstore.delete("s1", []) == 0

    async def test_delete_of_a_session_removes_all_of_it_and_nothing_else(
        self, vectorstore: VectorStore
    ) -> None:
        v = seeded_vector(1)
        await vectorstore.upsert(
            [rec("s1", i, v, model_id=("m1", "m2")[i % 2]) for i in range(6)]
            + [rec("s2", 1, v, model_id="m1"), rec("%", 1, v, model_id="m1")]
        )
        assert await vectorstore.delete("s1") == 6
        assert await vectorstore.delete("s1") == 0
        assert await vectorstore.delete("nobody") == 0
        assert await vectorstore.delete("%") == 1
        hits = await vectorstore.search(v, 10, scope(None, model_id="m1"))
        assert sessions_of(hits) == {"s2"}
        assert (await vectorstore.stats()).counts == {"m1": 1}

    async def test_a_deleted_vector_is_never_found_again(self, vectorstore: VectorStore) -> None:
        query = seeded_vector("q")
        await vectorstore.upsert([rec("s1", 1, query), rec("s1", 2, near(query, 2, 1.0))])
        assert len(await vectorstore.search(query, 5, scope(["s1"]))) == 2
        await vectorstore.delete("s1", ["s1/1/user"])
        hits = await vectorstore.search(query, 5, scope(["s1"]))
        assert [hit.timestamp for hit in hits] == [T0 + 2]

    async def test_delete_all_removes_every_vector(self, vectorstore: VectorStore) -> None:
        v = seeded_vector(1)
        await vectorstore.upsert(
            [
                rec("s1", 1, v),
                rec("s2", 1, v, model_id="m2"),
                rec("s3", 1, seeded_vector(3, 4), model_id="m3"),
            ]
        )
        assert await vectorstore.delete_all() == 3
        assert (await vectorstore.stats()).total == 0
        assert await vectorstore.search(v, 5, scope(None)) == []
        assert await vectorstore.delete_all() == 0
        await vectorstore.upsert([rec("s1", 1, v)])
        assert len(await vectorstore.search(v, 5, scope(None))) == 1

    # -- hostile text and concurrency --------------------------------------------------------------

    async def test_hostile_values_round_trip_in_every_field(self, vectorstore: VectorStore) -> None:
        long_text = "long text " * 20_000
        records = [
            rec(
                value,
                i,
                seeded_vector(i),
                role=value or "user",
                text=value + long_text if i == 0 else value,
                platform=value,
                user_id=value,
            )
            for i, value in enumerate(HOSTILE)
        ]
        await vectorstore.upsert(records)
        for record in records:
            hits = await vectorstore.search(record.vector, 1, scope([record.session_id]))
            assert len(hits) == 1
            hit = hits[0]
            assert (hit.session_id, hit.timestamp, hit.role, hit.text) == (
                record.session_id,
                record.timestamp,
                record.role,
                record.text,
            )
            assert (hit.platform, hit.user_id) == (record.platform, record.user_id)

    async def test_a_lone_surrogate_round_trips_or_is_refused_whole(
        self, vectorstore: VectorStore
    ) -> None:
        broken = rec("s1", 2, seeded_vector(2), text="broken \ud800 text")
        try:
            await vectorstore.upsert([rec("s1", 1, seeded_vector(1)), broken])
        except ValueError:
            assert (await vectorstore.stats()).total == 0
            return
        (hit,) = await vectorstore.search(broken.vector, 1, scope(["s1"]))
        assert hit.text == broken.text

    async def test_concurrent_upserts_all_land(self, vectorstore: VectorStore) -> None:
        batches = [
            [rec(f"s{b}", i, seeded_vector(f"{b}-{i}")) for i in range(20)] for b in range(8)
        ]
        counts = await asyncio.gather(*(vectorstore.upsert(batch) for batch in batches))
        assert counts == [20] * 8
        assert (await vectorstore.stats()).counts == {MODEL: 160}

    async def test_every_write_is_visible_to_the_next_search(
        self, vectorstore: VectorStore
    ) -> None:
        # Stores that cache vectors in RAM must invalidate on every kind of write.
        query = seeded_vector("q")
        await vectorstore.upsert([rec("s1", i, seeded_vector(i)) for i in range(5)])
        await vectorstore.search(query, 3, scope(["s1"]))
        await vectorstore.upsert([rec("s1", 50, query)])
        assert (await vectorstore.search(query, 1, scope(["s1"])))[0].timestamp == T0 + 50
        await vectorstore.upsert([rec("s1", 50, [-x for x in query])])
        assert (await vectorstore.search(query, 1, scope(["s1"])))[0].timestamp != T0 + 50
        await vectorstore.upsert([rec("s1", 51, query)])
        assert (await vectorstore.search(query, 1, scope(["s1"])))[0].timestamp == T0 + 51
        await vectorstore.delete("s1", ["s1/51/user"])
        assert T0 + 51 not in [
            h.timestamp for h in await vectorstore.search(query, 10, scope(["s1"]))
        ]
        await vectorstore.delete("s1")
        assert await vectorstore.search(query, 3, scope(["s1"])) == []
        await vectorstore.upsert([rec("s1", 60, query)])
        assert (await vectorstore.search(query, 1, scope(["s1"])))[0].timestamp == T0 + 60
        await vectorstore.delete_all()
        assert await vectorstore.search(query, 3, scope(["s1"])) == []

    async def test_stats_count_per_model(self, vectorstore: VectorStore) -> None:
        records: list[VectorRecord] = [
            rec("s1", i, seeded_vector(i), model_id=("m1", "m1", "m2")[i % 3]) for i in range(9)
        ]
        await vectorstore.upsert(records)
        stats = await vectorstore.stats()
        assert stats.counts == {"m1": 6, "m2": 3}
        assert [m.model_id for m in stats.models] == ["m1", "m2"]
        assert all(m.dim == 16 for m in stats.models)


__all__ = ["HOSTILE", "VectorStoreConformance"]
