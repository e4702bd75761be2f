"""The token estimate of SPEC §7.3, shared by agents (token_usage) and memory-summary."""

from aalis_api_memory.tokens import estimate_message_tokens, estimate_text_tokens
from aalis_schema_message import Message, ToolCall


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
