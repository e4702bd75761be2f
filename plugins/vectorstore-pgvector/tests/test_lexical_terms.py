"""The terms of the lexical leg (``_lexical.py``): identifiers whole and in parts, CJK bigrams."""

from __future__ import annotations

from aalis_plugin_vectorstore_pgvector._lexical import (
    IDENTIFIER,
    MAX_QUERY_TERMS,
    MAX_TERM,
    PART,
    document_terms,
    query_terms,
    seed_terms,
    tsquery_literal,
    weighted_terms,
)


def test_an_identifier_is_a_term_whole_and_by_its_parts() -> None:
    terms = weighted_terms("order AX-55812-K")
    assert terms["ax-55812-k"] == IDENTIFIER
    assert {"order", "ax", "55812", "k"} <= set(terms)
    assert terms["ax"] == PART
    assert "ax-55813-k" not in terms
    assert weighted_terms("parse_refund_window")["parse_refund_window"] == IDENTIFIER
    assert {"parse", "refund", "window"} <= set(weighted_terms("parse_refund_window"))
    assert "windows" not in weighted_terms("parse_refund_window")
    assert {"parserefundwindow", "parse", "refund", "window"} <= set(
        weighted_terms("parseRefundWindow")
    )
    assert "v2.3.1" in weighted_terms("release v2.3.1.")  # the full stop is not part of it


def test_chinese_is_indexed_by_bigrams_and_characters() -> None:
    terms = weighted_terms("王磊的电话")
    assert {"王磊", "磊的", "的电", "电话", "王", "磊"} <= set(terms)
    assert terms["王磊"] > terms["王"]
    assert "王蕾" not in terms
    # Beside Latin text, each script keeps its own tokens.
    assert {"call", "王磊"} <= set(weighted_terms("call王磊"))


def test_words_are_lower_cased_and_function_words_dropped() -> None:
    assert set(weighted_terms("The Dentist and THE clinic")) == {"dentist", "clinic"}
    assert weighted_terms("") == {}
    assert weighted_terms("?! ...") == {}


def test_limits_and_quoting() -> None:
    assert all(len(t) <= MAX_TERM for t in document_terms("x" * 500 + " y"))
    many = " ".join(f"word{i}" for i in range(100))
    assert len(query_terms(many)) == MAX_QUERY_TERMS
    assert query_terms("ax-1 order")[0] == ("ax-1", IDENTIFIER)  # heaviest first
    assert seed_terms([("ax-1", 4.0), ("k", 0.5)]) == ["ax-1"]
    assert seed_terms([("k", 0.5)]) == ["k"]
    assert tsquery_literal(["a'b", "c\\d"]) == "'a''b' | 'c\\\\d'"
