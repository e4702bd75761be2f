"""``lexical_terms``: the words and identifiers every store indexes (docs/recall.md)."""

from __future__ import annotations

import pytest
from aalis_api_vectorstore import LexicalTerms, lexical_terms

#: "AX-55812-K" typed in full-width forms, as a Chinese input method may give it.
_FULL_WIDTH = "".join(chr(ord(ch) + 0xFEE0) for ch in "AX-55812-K")


@pytest.mark.parametrize(
    ("text", "identifiers"),
    [
        ("order AX-55812-K please", ("ax-55812-k",)),
        ("call parse_refund_window()", ("parse_refund_window",)),
        ("in ParseRefundWindow and HTTPServer", ("parserefundwindow", "httpserver")),
        ("version v2 of build 55812", ("v2", "55812")),
        ("上次王磊问的", ("王磊",)),
        ("王雷问了", ("王雷",)),  # 雷 is a surname too, but not inside a name
        ("plain words only, nothing else", ()),
        (_FULL_WIDTH, ("ax-55812-k",)),  # full width is the same identifier
    ],
)
def test_identifiers_are_recognised_by_their_shape(text: str, identifiers: tuple[str, ...]) -> None:
    assert lexical_terms(text).identifiers == identifiers


def test_words_keep_identifier_parts_and_drop_stop_words() -> None:
    terms = lexical_terms("What is the status of order AX-55812-K?")
    assert terms.words == ("status", "order", "ax", "55812")
    assert lexical_terms("ParseRefundWindow").words == ("parse", "refund", "window")


def test_cjk_is_indexed_as_bigrams_and_single_characters_whole() -> None:
    assert lexical_terms("王磊明天到").words == ("王磊", "磊明", "明天", "天到")
    assert lexical_terms("找 王 ok").words == ("找", "王", "ok")
    assert lexical_terms("東京タワー").words == ("東京", "京タ", "タワ", "ワー")


def test_a_query_without_terms_is_falsy() -> None:
    assert not lexical_terms("?! a I the")
    assert lexical_terms("x-1")
    assert lexical_terms("") == LexicalTerms(words=(), identifiers=())


def test_only_text_is_accepted() -> None:
    with pytest.raises(TypeError):
        lexical_terms(b"bytes")  # type: ignore[arg-type]
