from collections.abc import Sequence

import pytest
from aalis_api_llm import (
    ChatModel,
    ChatResult,
    LLMError,
    LLMRateLimited,
    LLMRequestError,
    LLMTimeout,
    TokenUsage,
    llm,
)
from aalis_schema_message import Message

from aalis_core._capability import Capability


class EchoModel:
    """A minimal provider written the way a plugin author would write one."""

    id = "echo"
    context_window = 1000

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        text = " | ".join(m.content or "" for m in messages if not m.is_control)
        return ChatResult(
            content=text, usage=TokenUsage(prompt_tokens=3, completion_tokens=1, total_tokens=4)
        )


def test_capability_descriptor() -> None:
    assert isinstance(llm, Capability)
    assert llm.name == "llm"
    assert llm.protocol is ChatModel
    assert llm.adapter is None


async def test_a_plain_class_satisfies_the_protocol() -> None:
    model = EchoModel()
    assert isinstance(model, ChatModel)
    result = await model.chat(
        [
            Message(role="user", content="hi"),
            Message(role="notice", kind="event-marker", content="x"),
        ]
    )
    assert result.content == "hi"
    assert result.usage is not None
    assert result.usage.total_tokens == 4


def test_an_object_without_chat_is_not_a_model() -> None:
    class NoChat:
        id = "x"
        context_window = 10

    assert not isinstance(NoChat(), ChatModel)


@pytest.mark.parametrize("value", [-1, 1.5, True, "3"])
def test_token_usage_refuses_non_counts(value: object) -> None:
    with pytest.raises(ValueError, match="prompt_tokens"):
        TokenUsage(prompt_tokens=value, completion_tokens=0, total_tokens=0)  # type: ignore[arg-type]


def test_chat_result_content_must_be_text() -> None:
    with pytest.raises(TypeError, match="content"):
        ChatResult(content=None)  # type: ignore[arg-type]
    assert ChatResult(content="").usage is None


def test_errors_form_one_hierarchy_and_name_the_model() -> None:
    err = LLMRateLimited("too many requests", model="m1", retry_after=2.5)
    assert isinstance(err, LLMError)
    assert str(err) == "m1: too many requests"
    assert err.retry_after == 2.5
    assert LLMRequestError("bad", status=404).status == 404
    assert str(LLMTimeout("no answer in 5 s")) == "no answer in 5 s"
