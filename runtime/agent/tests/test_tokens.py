"""The token estimate of SPEC §7.3, shared by agents (token_usage) and memory-summary."""

import math

from aalis_agent import estimate_message_tokens, estimate_text_tokens, is_cjk
from aalis_schema_message import Message, ToolCall
from hypothesis import given, settings, strategies as st


def u(text: str) -> Message:
    return Message(role="user", content=text)


def call(call_id: str) -> Message:
    return Message(
        role="assistant",
        content=None,
        tool_calls=(ToolCall(id=call_id, name="lookup", arguments="{}"),),
    )


def test_token_estimate_rules() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("hello world") == 4  # ceil(11 / 3.5)
    assert estimate_text_tokens("你好") == 3  # 2 x 1.5
    assert estimate_text_tokens("ab你好cd") == 1 + 3 + 1  # two runs of other characters
    assert estimate_text_tokens("日本語のテキスト") == 12  # kana count as CJK too
    assert estimate_message_tokens(u("hello world")) == 8  # +4 per message
    assert estimate_message_tokens(Message(role="user", content=None)) == 4
    # tool calls are read by the model too
    assert estimate_message_tokens(call("c1")) == 4 + estimate_text_tokens("lookup {}")


def _per_character(text: str) -> int:
    """The rule spelled out one character at a time: the reference the fast scan must match."""
    from aalis_agent._tokens import _CJK_RANGES

    cjk = total = run = 0
    for char in text:
        if any(low <= ord(char) <= high for low, high in _CJK_RANGES):
            cjk += 1
            total += math.ceil(run / 3.5)
            run = 0
        else:
            run += 1
    return total + math.ceil(run / 3.5) + math.ceil(cjk * 1.5)


@settings(max_examples=300, derandomize=True)
@given(
    st.text(
        alphabet=st.sampled_from(
            "ab -.\n\t]\\^9"  # ASCII, regex metacharacters
            "你好。！？・ー"  # noqa: RUF001 - CJK ideographs and punctuation
            "あア한ᄀＡｱ𠀀𪜀"  # kana, hangul, jamo, full/half width, extensions B and later
            "é€\u2e7f\u2e80\u2fdf\u2fe0\uffef\ufff0"  # neighbours and edges of the ranges
        )
    )
)
def test_the_fast_scan_matches_the_rule_character_by_character(text: str) -> None:
    assert estimate_text_tokens(text) == _per_character(text)
    assert all(is_cjk(c) == (_per_character(c) == 2) for c in text)
