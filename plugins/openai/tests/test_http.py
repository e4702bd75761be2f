"""The shared HTTP layer through both clients: what one fix now gives both (docs/host/openai.md).

The loopback server of conftest.py answers any path, so the embedder is driven here with
scripted replies too."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from aalis_api_embedding import (
    EmbeddingConnectionError,
    EmbeddingRequestError,
    EmbeddingServerError,
    EmbeddingTimeout,
)
from aalis_api_llm import LLMRequestError, LLMServerError
from aalis_plugin_openai import (
    EmbeddingOpenaiConfig,
    LlmOpenaiConfig,
    OpenAIChatModel,
    OpenAIEmbedder,
)
from aalis_schema_message import Message

#: A key no redaction pattern recognises: only the literal masking catches it.
KEY = "hunter2-plain-secret-value"


class Recorder:
    """A logger that keeps what it is given, unfiltered: what the layer itself emits."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))

    def text(self) -> str:
        return repr(self.lines)


def embedder(base_url: str, logger: Any = None, **fields: Any) -> OpenAIEmbedder:
    settings: dict[str, Any] = {
        "base_url": base_url,
        "model": "e",
        "api_key": KEY,
        "dimensions": 3,
        "retry_backoff": 0.01,
    }
    settings.update(fields)
    return OpenAIEmbedder(EmbeddingOpenaiConfig(**settings), logger=logger)


def chat_model(base_url: str, logger: Any = None, **fields: Any) -> OpenAIChatModel:
    settings: dict[str, Any] = {
        "base_url": base_url,
        "model": "m",
        "api_key": KEY,
        "retry_backoff": 0.01,
    }
    settings.update(fields)
    return OpenAIChatModel(LlmOpenaiConfig(**settings), logger=logger)


def vectors(count: int) -> dict[str, Any]:
    return {"data": [{"index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(count)]}


async def test_retry_log_lines_of_both_clients_never_show_the_key(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    echo = {"error": {"message": f"upstream rejected key {KEY}"}}
    chat_server.script(
        reply_type(503, echo), reply_type(body=completion_body("ok")), reply_type(503, echo)
    )
    chat_server.script(reply_type(body=vectors(1)))
    chat_log, embed_log = Recorder(), Recorder()
    model = chat_model(chat_server.base_url, chat_log)
    embed = embedder(chat_server.base_url, embed_log)
    try:
        assert (await model.chat([Message(role="user", content="hi")])).content == "ok"
        assert len(await embed.embed_query("hello")) == 3
    finally:
        await model.aclose()
        await embed.aclose()
    assert [event for event, _ in chat_log.lines] == ["llm request failed, retrying"]
    assert [event for event, _ in embed_log.lines] == ["embedding request failed, retrying"]
    for log in (chat_log, embed_log):
        assert "upstream rejected key ***" in log.text()
        assert KEY not in log.text()
    assert chat_log.lines[0][1]["model"] == "llm-openai:m"
    assert embed_log.lines[0][1]["model_id"] == "openai:e:d3"


async def test_a_key_at_the_cut_of_a_long_server_message_is_masked_whole(
    chat_server: Any, reply_type: Any
) -> None:
    """The server's text is shortened to 300 characters; masking after the cut would leave
    the first half of a key that sits across it."""
    echo = {"error": {"message": "x" * 285 + f" key {KEY} was refused"}}
    chat_server.script(reply_type(401, echo), reply_type(401, echo))
    model = chat_model(chat_server.base_url)
    embed = embedder(chat_server.base_url)
    try:
        with pytest.raises(LLMRequestError) as chat_error:
            await model.chat([Message(role="user", content="hi")])
        with pytest.raises(EmbeddingRequestError) as embed_error:
            await embed.embed_query("hello")
    finally:
        await model.aclose()
        await embed.aclose()
    for error in (chat_error.value, embed_error.value):
        assert "hunter2" not in str(error)
        assert str(error).endswith("...")


async def test_the_urls_credentials_are_masked_even_where_a_server_echoes_them(
    chat_server: Any, reply_type: Any
) -> None:
    base = chat_server.base_url.replace("http://", "http://me:pa55word-x@")
    chat_server.script(reply_type(400, {"error": {"message": "user me:pa55word-x refused"}}))
    model = chat_model(base, api_key=None)
    try:
        with pytest.raises(LLMRequestError) as caught:
            await model.chat([Message(role="user", content="hi")])
    finally:
        await model.aclose()
    assert "pa55word-x" not in str(caught.value)
    assert "user me:***" in str(caught.value)
    assert "@" not in str(caught.value)  # the shown URL has no user info


async def test_one_deadline_covers_every_batch_of_an_embed_call(
    chat_server: Any, reply_type: Any
) -> None:
    chat_server.script(*[reply_type(body=vectors(1), delay=0.4) for _ in range(5)])
    embed = embedder(chat_server.base_url, batch_size=1, timeout=1.0)
    started = time.monotonic()
    try:
        with pytest.raises(EmbeddingTimeout, match=r"within 1 s"):
            await embed.embed_documents([f"text {i}" for i in range(5)])
    finally:
        await embed.aclose()
    assert time.monotonic() - started < 1.6
    assert len(chat_server.requests) <= 3


async def test_a_missing_retry_after_falls_back_to_a_doubling_wait(
    chat_server: Any, reply_type: Any
) -> None:
    chat_server.script(*[reply_type(502, "bad gateway") for _ in range(3)])
    embed = embedder(chat_server.base_url, max_retries=2, retry_backoff=0.2)
    started = time.monotonic()
    try:
        with pytest.raises(EmbeddingServerError, match="bad gateway") as caught:
            await embed.embed_query("hello")
    finally:
        await embed.aclose()
    assert caught.value.status == 502
    assert len(chat_server.requests) == 3
    assert time.monotonic() - started >= 0.2 + 0.4


async def test_max_retry_wait_caps_a_long_retry_after(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    chat_server.script(
        reply_type(429, {"error": "later"}, headers={"Retry-After": "60"}),
        reply_type(body=completion_body("served")),
    )
    model = chat_model(chat_server.base_url, timeout=5.0, max_retry_wait=0.2)
    started = time.monotonic()
    try:
        result = await model.chat([Message(role="user", content="hi")])
    finally:
        await model.aclose()
    assert result.content == "served"
    assert 0.2 <= time.monotonic() - started < 2.0


async def test_a_dropped_connection_is_retried_then_reported_by_both(
    chat_server: Any, reply_type: Any
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    embed = embedder(base, max_retries=1)
    try:
        with pytest.raises(EmbeddingConnectionError, match=f"127.0.0.1:{port}/v1/embeddings"):
            await embed.embed_query("hello")
    finally:
        await embed.aclose()
    # A 5xx is a server error for both contracts, with the status kept.
    chat_server.script(reply_type(500, ""))
    model = chat_model(chat_server.base_url, max_retries=0)
    try:
        with pytest.raises(LLMServerError, match="Internal Server Error") as caught:
            await model.chat([Message(role="user", content="hi")])
    finally:
        await model.aclose()
    assert caught.value.status == 500


async def test_a_placeholder_key_does_not_garble_the_messages(
    chat_server: Any, reply_type: Any
) -> None:
    """Local servers take any key, and configs write ``api_key = "x"``: masking every x of a
    message would hide the server's reason instead of a secret."""
    chat_server.script(reply_type(404, {"error": {"message": "model 'mixtral' not found"}}))
    model = chat_model(chat_server.base_url, api_key="x")
    try:
        with pytest.raises(LLMRequestError, match="model 'mixtral' not found"):
            await model.chat([Message(role="user", content="hi")])
    finally:
        await model.aclose()
