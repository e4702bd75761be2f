import socket
import time
from typing import Any

import pytest
from aalis_api_llm import (
    ChatModel,
    LLMConnectionError,
    LLMRateLimited,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeout,
)
from aalis_plugin_openai import LlmOpenaiConfig, OpenAIChatModel
from aalis_schema_message import Message, ToolCall

KEY = "sk-test-0123456789abcdef"


def model_for(server: Any, **overrides: Any) -> OpenAIChatModel:
    settings: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "test-model",
        "api_key": KEY,
        "timeout": 5.0,
        "retry_backoff": 0.01,
    }
    settings.update(overrides)
    return OpenAIChatModel(LlmOpenaiConfig(**settings))


async def test_a_reply_round_trip(chat_server: Any, reply_type: Any, completion_body: Any) -> None:
    chat_server.script(reply_type(body=completion_body("Hello there")))
    model = model_for(chat_server, context_window=32000)
    assert isinstance(model, ChatModel)
    assert model.id == "llm-openai:test-model"
    assert model.context_window == 32000
    messages = [
        Message(role="system", content="be brief"),
        Message(role="user", content="weather?", name="ann"),
        Message(
            role="assistant",
            content=None,
            tool_calls=(ToolCall(id="c1", name="weather", arguments='{"city":"Oslo"}'),),
        ),
        Message(role="tool", content="rain", tool_call_id="c1", name="weather"),
        Message(role="notice", kind="event-marker", content="[compressed]"),
        Message(role="notice", content="bob joined"),
    ]
    result = await model.chat(messages, temperature=0.2, max_tokens=50)
    await model.aclose()

    assert result.content == "Hello there"
    assert result.usage is not None
    assert (
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
        result.usage.total_tokens,
    ) == (11, 3, 14)
    assert result.finish_reason == "stop"
    assert result.model == "test-model-0301"

    [request] = chat_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    body = request["json"]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 50
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?", "name": "ann"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        {"role": "system", "content": "[notice] bob joined"},
    ]


async def test_no_key_sends_no_authorization(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    chat_server.script(reply_type(body=completion_body("ok", usage=False)))
    model = model_for(chat_server, api_key=None)
    result = await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert result.usage is None
    assert "Authorization" not in chat_server.requests[0]["headers"]
    assert "temperature" not in chat_server.requests[0]["json"]


async def test_a_client_error_fails_at_once_and_never_shows_the_key(
    chat_server: Any, reply_type: Any
) -> None:
    chat_server.script(
        reply_type(
            401,
            {
                "error": {
                    "message": f"Incorrect API key provided: {KEY}",
                    "type": "invalid_request_error",
                }
            },
        )
    )
    model = model_for(chat_server, max_retries=3)
    with pytest.raises(LLMRequestError) as caught:
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert caught.value.status == 401
    assert "HTTP 401" in str(caught.value)
    assert "Incorrect API key provided" in str(caught.value)
    assert KEY not in str(caught.value)
    assert "0123456789abcdef" not in str(caught.value)
    assert len(chat_server.requests) == 1


async def test_429_then_200_honours_retry_after(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    chat_server.script(
        reply_type(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "1"}),
        reply_type(body=completion_body("after the wait")),
    )
    model = model_for(chat_server)
    started = time.monotonic()
    result = await model.chat([Message(role="user", content="hi")])
    elapsed = time.monotonic() - started
    await model.aclose()
    assert result.content == "after the wait"
    assert len(chat_server.requests) == 2
    assert elapsed >= 1.0


async def test_persistent_5xx_gives_up_after_max_retries(chat_server: Any, reply_type: Any) -> None:
    chat_server.script(*[reply_type(503, "upstream down") for _ in range(3)])
    model = model_for(chat_server, max_retries=2)
    with pytest.raises(LLMServerError) as caught:
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert caught.value.status == 503
    assert "upstream down" in str(caught.value)
    assert len(chat_server.requests) == 3


async def test_rate_limit_past_the_deadline_is_reported_not_waited(
    chat_server: Any, reply_type: Any
) -> None:
    chat_server.script(reply_type(429, {"error": "quota"}, headers={"Retry-After": "120"}))
    model = model_for(chat_server, timeout=2.0, max_retry_wait=300.0)
    started = time.monotonic()
    with pytest.raises(LLMRateLimited) as caught:
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert time.monotonic() - started < 1.5
    assert caught.value.retry_after == 120.0


async def test_a_slow_server_times_out(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    chat_server.script(reply_type(body=completion_body("too late"), delay=10))
    model = model_for(chat_server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"within 0\.5 s"):
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    "body",
    [
        "<html>gateway</html>",
        {"choices": []},
        {"choices": [{"message": {"role": "assistant", "content": None}}]},
    ],
)
async def test_unusable_replies(chat_server: Any, reply_type: Any, body: Any) -> None:
    chat_server.script(reply_type(body=body))
    model = model_for(chat_server)
    with pytest.raises(LLMResponseError):
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()


async def test_an_unreachable_endpoint() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIChatModel(
        LlmOpenaiConfig(
            base_url=f"http://user:hunter2@127.0.0.1:{port}/v1",
            model="m",
            max_retries=1,
            retry_backoff=0.01,
        )
    )
    with pytest.raises(LLMConnectionError) as caught:
        await model.chat([Message(role="user", content="hi")])
    await model.aclose()
    assert "hunter2" not in str(caught.value)
    assert f"127.0.0.1:{port}/v1/chat/completions" in str(caught.value)


def test_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="base_url"):
        LlmOpenaiConfig(base_url="ftp://x", model="m")
    with pytest.raises(ValueError, match="timeout"):
        LlmOpenaiConfig(timeout=0)
    assert KEY not in repr(LlmOpenaiConfig(base_url="http://x", model="m", api_key=KEY))


async def test_a_response_body_past_the_cap_is_refused_and_the_error_says_so(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    """A broken or hostile endpoint cannot make the client read hundreds of MB."""
    chat_server.script(reply_type(body=completion_body("x" * 200_000)))
    model = model_for(chat_server, max_response_bytes=65_536, max_retries=0)
    with pytest.raises(LLMResponseError, match=r"larger than 65536 bytes.*max_response_bytes"):
        await model.chat([Message(role="user", content="hi")])
    chat_server.script(reply_type(body=completion_body("small enough")))
    assert (await model.chat([Message(role="user", content="hi")])).content == "small enough"
    await model.aclose()


def test_the_response_cap_defaults_to_a_few_megabytes() -> None:
    config = LlmOpenaiConfig(base_url="http://127.0.0.1:1/v1", model="m")
    assert 1024 * 1024 <= config.max_response_bytes <= 16 * 1024 * 1024
