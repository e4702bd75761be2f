"""The kit's lexical cases: the optional ``LexicalSearch`` group (docs/recall.md, "Lexical leg").

A store without ``lexical_search`` skips them with the reason; a store that has it passes them
all. The hard cases are histories of near-identical messages where only the identifier
differs: a leg that weighs every query word alike ranks the look-alikes first and fails.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from aalis_api_vectorstore import ScopeFilter, VectorHit, VectorRecord, VectorStore

from aalis_api_vectorstore_conformance._identity import conformance
from aalis_api_vectorstore_conformance._support import T0, rec, scope, seeded_vector

#: Unrelated chatter around the cases, so that no term is rare only because the store is tiny.
FILLER = (
    "we talked about the weather and the train to the coast",
    "remind me to buy milk and bread tomorrow",
    "the meeting moved to thursday afternoon",
    "今天天气很好 我们去公园散步吧",
    "明天下午三点开会 别忘了带电脑",
    "the assistant suggested a shorter route home",
)


async def lexical(store: VectorStore, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
    """``store.lexical_search``, or skip the calling test when the store has none."""
    method = getattr(store, "lexical_search", None)
    if method is None:
        pytest.skip(
            f"optional method not implemented by this store: lexical_search "
            f"({type(store).__name__})"
        )
    hits: list[VectorHit] = await method(query, k, where)
    return hits


def texts(hits: Sequence[VectorHit]) -> list[str]:
    return [hit.text for hit in hits]


def _filler(session: str, start: int, count: int = len(FILLER)) -> list[VectorRecord]:
    """``count`` unrelated messages (the fixed ones, then made-up chatter in two languages)."""
    made = [
        f"{who} {did} the {what} on {day}" if i % 2 else f"{who_zh}{did_zh}{day_zh}"
        for i, (who, did, what, day, who_zh, did_zh, day_zh) in enumerate(
            zip(
                ["anna", "ben", "the cat", "my boss", "grandma"] * 20,
                ["painted", "sold", "fixed", "borrowed", "lost", "found", "cleaned"] * 15,
                ["fence", "bike", "sofa", "kettle", "garden", "piano", "boat", "lamp"] * 13,
                ["monday", "friday", "sunday", "new year", "the holiday"] * 20,
                ["小猫", "爷爷", "老师", "邻居"] * 25,
                ["喜欢吃苹果", "去北京出差", "在学钢琴", "修好了自行车", "买了新手机"] * 20,
                ["昨天", "周末", "每天早上", "去年夏天", "刚才"] * 20,
                strict=False,
            )
        )
    ]
    texts = (list(FILLER) + made)[:count]
    return [
        rec(session, start + i, seeded_vector(f"filler{i}"), text=text)
        for i, text in enumerate(texts)
    ]


@conformance
class LexicalSearchConformance:
    """The rules of ``lexical_search``; included in ``VectorStoreConformance``."""

    # -- what it finds -------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("query", "wanted"),
        [
            ("AX-55812-K", "the refund for order AX-55812-K was approved"),
            ("ax-55812-k", "the refund for order AX-55812-K was approved"),
            ("parse_refund_window", "parse_refund_window breaks on leap days"),
            ("王磊", "王磊明天来公司拿合同"),
            ("ParseRefundWindow", "rename it ParseRefundWindow in the Go port"),
            ("plate 粤B·D3K57", "the car with plate 粤B·D3K57 was parked outside"),
        ],
    )
    async def test_identifiers_the_vectors_blur_are_found(
        self, vectorstore: VectorStore, query: str, wanted: str
    ) -> None:
        records = _filler("s1", 0) + [
            rec("s1", 100 + i, seeded_vector(f"id{i}"), text=text)
            for i, text in enumerate(
                [
                    "the refund for order AX-55812-K was approved",
                    "parse_refund_window breaks on leap days",
                    "王磊明天来公司拿合同",
                    "rename it ParseRefundWindow in the Go port",
                    "the car with plate 粤B·D3K57 was parked outside",
                ]
            )
        ]
        await vectorstore.upsert(records)
        hits = await lexical(vectorstore, query, 3, scope(["s1"]))
        assert hits, f"nothing found for {query!r}"
        assert hits[0].text == wanted

    async def test_hits_carry_the_record_and_positive_scores_best_first(
        self, vectorstore: VectorStore
    ) -> None:
        record = rec(
            "s1",
            1,
            seeded_vector(1),
            role="assistant",
            text="invoice INV-2024-0042 is paid",
            platform="qq",
            user_id="u-1",
        )
        await vectorstore.upsert(
            [record, rec("s1", 2, seeded_vector(2), text="the invoice is late")]
        )
        hits = await lexical(vectorstore, "invoice INV-2024-0042", 5, scope(["s1"]))
        assert [h.message_id for h in hits] == [record.message_id, "s1/2/user"]
        first = hits[0]
        assert (first.session_id, first.timestamp, first.role, first.model_id) == (
            record.session_id,
            record.timestamp,
            "assistant",
            record.model_id,
        )
        assert (first.text, first.platform, first.user_id) == (record.text, "qq", "u-1")
        assert all(isinstance(h.score, float) and h.score > 0 for h in hits)
        assert hits[0].score > hits[1].score

    async def test_no_shared_term_returns_nothing(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert(_filler("s1", 0))
        assert await lexical(vectorstore, "kangaroo QX-1", 5, scope(["s1"])) == []
        assert await lexical(vectorstore, "", 5, scope(["s1"])) == []
        assert await lexical(vectorstore, "?! ...", 5, scope(["s1"])) == []

    async def test_k_limits_and_bad_arguments_are_refused(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert(
            [rec("s1", i, seeded_vector(i), text=f"ticket number {i}") for i in range(6)]
        )
        assert len(await lexical(vectorstore, "ticket", 4, scope(["s1"]))) == 4
        assert await lexical(vectorstore, "ticket", 0, scope(["s1"])) == []
        bad: object
        for bad in (-1, 2.5, True):
            with pytest.raises(ValueError, match="non-negative int"):
                await lexical(vectorstore, "ticket", bad, scope(["s1"]))  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await lexical(vectorstore, "ticket", "2", scope(["s1"]))  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await lexical(vectorstore, b"ticket", 2, scope(["s1"]))  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await lexical(vectorstore, "ticket", 2, None)  # type: ignore[arg-type]

    async def test_query_syntax_is_data(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert(
            [rec("s1", 1, seeded_vector(1), text='he said "NEAR(a b)" AND OR NOT * ^ : {x}')]
        )
        for query in ('"', "NEAR(a b)", "a AND OR", "*", "^x", "col:x", "{x}", "'; DROP --"):
            await lexical(vectorstore, query, 3, scope(["s1"]))
        hits = await lexical(vectorstore, 'NEAR(a "b") said', 3, scope(["s1"]))
        assert texts(hits) == ['he said "NEAR(a b)" AND OR NOT * ^ : {x}']

    # -- the scope filter, inside the query ----------------------------------------------

    async def test_an_out_of_scope_crowd_never_starves_the_scope(
        self, vectorstore: VectorStore
    ) -> None:
        crowd = [
            rec(f"other{i % 7}", i, seeded_vector(i), text=f"order AX-55812-K AX-55812-K #{i}")
            for i in range(600)
        ]
        mine = [
            rec("mine", 1000 + i, seeded_vector(f"m{i}"), text=f"about AX-55812-K, reply {i}")
            for i in range(3)
        ]
        await vectorstore.upsert(crowd + mine)
        hits = await lexical(vectorstore, "order AX-55812-K", 3, scope(["mine"]))
        assert sorted(h.message_id for h in hits) == sorted(r.message_id for r in mine)
        everyone_but = scope(None, exclude=[f"other{i}" for i in range(7)])
        assert len(await lexical(vectorstore, "AX-55812-K", 3, everyone_but)) == 3

    async def test_every_field_of_the_filter_applies(self, vectorstore: VectorStore) -> None:
        text = "booking ref ZX-9001"
        await vectorstore.upsert(
            [
                rec("a", 1, seeded_vector(1), text=text, platform="qq", user_id="u1"),
                rec("a", 2, seeded_vector(2), text=text, role="assistant", platform="tg"),
                rec("b", 3, seeded_vector(3), text=text, user_id="u2"),
                rec("c", 4, seeded_vector(4), text=text, model_id="kit-model-b"),
            ]
        )

        async def found(where: ScopeFilter) -> set[str]:
            return {h.message_id for h in await lexical(vectorstore, "ZX-9001", 10, where)}

        assert await found(scope(None)) == {"a/1/user", "a/2/assistant", "b/3/user"}
        assert await found(scope(None, model_id="kit-model-b")) == {"c/4/user"}
        assert await found(scope(["a"])) == {"a/1/user", "a/2/assistant"}
        assert await found(scope(None, exclude=["a"])) == {"b/3/user"}
        assert await found(scope(None, platform="qq")) == {"a/1/user"}
        assert await found(scope(None, user_id="u2")) == {"b/3/user"}
        assert await found(scope(None, roles=["assistant"])) == {"a/2/assistant"}
        assert await found(scope([])) == set()
        assert await found(scope(None, roles=[])) == set()

    # -- it follows deletes, clears and rewrites -----------------------------------------

    async def test_deleted_records_are_never_found_again(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert(
            [
                rec("s1", 1, seeded_vector(1), text="code QX-77 one"),
                rec("s1", 2, seeded_vector(2), text="code QX-77 two"),
                rec("s1", 3, seeded_vector(3), text="code QX-77 three"),
                rec("s2", 4, seeded_vector(4), text="code QX-77 four"),
            ]
        )
        everywhere = scope(None)
        await vectorstore.delete("s1", ["s1/1/user"])
        assert {h.message_id for h in await lexical(vectorstore, "QX-77", 9, everywhere)} == {
            "s1/2/user",
            "s1/3/user",
            "s2/4/user",
        }
        await vectorstore.delete("s1", timestamps=[T0 + 2])
        assert {h.message_id for h in await lexical(vectorstore, "QX-77", 9, everywhere)} == {
            "s1/3/user",
            "s2/4/user",
        }
        await vectorstore.delete("s1")
        assert texts(await lexical(vectorstore, "QX-77", 9, everywhere)) == ["code QX-77 four"]
        await vectorstore.delete_all()
        assert await lexical(vectorstore, "QX-77", 9, everywhere) == []
        await vectorstore.upsert([rec("s3", 5, seeded_vector(5), text="code QX-77 again")])
        assert texts(await lexical(vectorstore, "QX-77", 9, everywhere)) == ["code QX-77 again"]

    async def test_a_rewrite_replaces_the_old_text(self, vectorstore: VectorStore) -> None:
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1), text="my locker is K-118")])
        await vectorstore.upsert([rec("s1", 1, seeded_vector(1), text="my locker is K-204")])
        assert await lexical(vectorstore, "K-118", 5, scope(["s1"])) == []
        (hit,) = await lexical(vectorstore, "K-204", 5, scope(["s1"]))
        assert hit.text == "my locker is K-204"
        await vectorstore.upsert(
            [rec("s1", 1, seeded_vector(1), text="moved", model_id="kit-model-b")]
        )
        assert await lexical(vectorstore, "K-204", 5, scope(["s1"])) == []

    # -- the hard case: near-identical messages ------------------------------------------

    @pytest.mark.parametrize(
        ("query", "target", "lookalikes"),
        [
            (
                "what is the status of order AX-55812-K, has it shipped yet?",
                "AX-55812-K left the warehouse",
                [
                    f"what is the status of order {other}, has it shipped yet?"
                    for other in ("AX-55813-K", "AX-55811-K", "AX-55812-J", "AX-56812-K")
                ],
            ),
            (
                "上次王磊问的那个订单到了吗",
                "王磊说订单还没到",
                [f"上次{other}问的那个订单到了吗" for other in ("王蕾", "汪磊", "王雷", "黄磊")],
            ),
            (
                "why does parse_refund_window fail on the last day of the month?",
                "parse_refund_window returns None for expired orders",
                [
                    f"why does {other} fail on the last day of the month?"
                    for other in (
                        "parse_refund_windows",
                        "parse_return_window",
                        "parse_refund_windowed",
                        "ParseRefundWindow2",
                    )
                ],
            ),
        ],
    )
    async def test_the_exact_identifier_outranks_lookalikes_in_the_same_words(
        self, vectorstore: VectorStore, query: str, target: str, lookalikes: list[str]
    ) -> None:
        # A history where the query's wording is not common (so it counts for BM25), the
        # look-alikes repeat that wording around another identifier, and the target says
        # the identifier in other words: only a leg that knows identifiers ranks it first.
        records = _filler("s1", 0, count=60)
        records += [
            rec("s1", 100 + i, seeded_vector(f"lookalike{i}"), text=text)
            for i, text in enumerate(lookalikes)
        ]
        records.append(rec("s1", 99, seeded_vector("target"), text=target))
        await vectorstore.upsert(records)
        hits = await lexical(vectorstore, query, 5, scope(["s1"]))
        assert hits, f"nothing found for {query!r}"
        assert hits[0].text == target, texts(hits)


__all__ = ["FILLER", "LexicalSearchConformance", "lexical"]
