"""The embedder over actual HTTP: a real ``/v1/embeddings`` server on loopback embeds with the
contract's hash embedder unless a test scripts a failure."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio
from aalis_api_embedding import (
    EmbeddingConnectionError,
    EmbeddingRequestError,
    EmbeddingResponseError,
    EmbeddingServerError,
    EmbeddingTimeout,
    HashEmbedder,
    embed_queries,
    embedding,
)
from aalis_api_embedding_conformance import EmbedderConformance, cosine
from aalis_plugin_openai import EmbeddingOpenai, EmbeddingOpenaiConfig, OpenAIEmbedder

from aalis_core.testing import running_host


@attrs.define
class Scripted:
    status: int = 200
    body: Any = None  # dict -> JSON, str -> raw text; None with 200 -> real embeddings
    delay: float = 0.0
    headers: dict[str, str] = attrs.Factory(dict)


class EmbeddingServer:
    def __init__(self, *, dim: int = 32) -> None:
        self.model = HashEmbedder(dim=dim)
        self.script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self.shuffle = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = json.loads(raw)
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers.items()), "json": request}
                )
                step = server.script.pop(0) if server.script else Scripted()
                if step.delay:
                    time.sleep(step.delay)
                if step.status == 200 and step.body is None:
                    inputs = request["input"]
                    if not inputs or any(not isinstance(t, str) or not t for t in inputs):
                        body: Any = {"error": {"message": "'$.input' is invalid"}}
                        status = 400
                    else:
                        data = [
                            {"object": "embedding", "index": i, "embedding": server.model.vector(t)}
                            for i, t in enumerate(inputs)
                        ]
                        if server.shuffle:
                            random.Random(len(data)).shuffle(data)
                        body, status = {"object": "list", "data": data}, 200
                else:
                    body, status = step.body, step.status
                payload = (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in step.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> EmbeddingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as running:
        yield running


KEY = "sk-test-SECRET-0123456789abcdef"


def config(server: EmbeddingServer, **fields: object) -> EmbeddingOpenaiConfig:
    base: dict[str, object] = {
        "base_url": server.base_url,
        "model": "text-embedding-test",
        "api_key": KEY,
        "retry_backoff": 0.01,
    }
    base.update(fields)
    return EmbeddingOpenaiConfig(**base)  # type: ignore[arg-type]


class TestOverLoopbackConformance(EmbedderConformance):
    @pytest_asyncio.fixture
    async def embedder(self) -> AsyncIterator[OpenAIEmbedder]:
        with EmbeddingServer() as server:
            model = await OpenAIEmbedder.connect(config(server, batch_size=4))
            yield model
            await model.aclose()


async def test_dim_is_learnt_and_the_key_is_sent(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server))
    try:
        assert model.dim == 32
        assert model.model_id == "openai:text-embedding-test"
        first = server.requests[0]
        assert first["path"] == "/v1/embeddings"
        assert first["headers"]["Authorization"] == f"Bearer {KEY}"
        assert first["json"]["model"] == "text-embedding-test"
    finally:
        await model.aclose()


async def test_dimensions_are_sent_and_name_the_space(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32))
    try:
        assert server.requests == []  # no probe needed
        await model.embed_query("hello")
        assert server.requests[0]["json"]["dimensions"] == 32
        assert model.model_id == "openai:text-embedding-test:d32"
    finally:
        await model.aclose()


async def test_batches_keep_input_order_when_the_server_shuffles(server: EmbeddingServer) -> None:
    server.shuffle = True
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, batch_size=3))
    try:
        texts = [f"text number {i}" for i in range(8)]
        vectors = await model.embed_documents(texts)
        assert [len(r["json"]["input"]) for r in server.requests] == [3, 3, 2]
        for text, vector in zip(texts, vectors, strict=True):
            assert cosine(vector, server.model.vector(text)) > 0.9999
    finally:
        await model.aclose()


async def test_queries_are_embedded_in_one_request(server: EmbeddingServer) -> None:
    # the optional QueryBatch: memory-vector's re-ranking asks for ten candidates at once
    model = await OpenAIEmbedder.connect(config(server, dimensions=32))
    try:
        texts = [f"candidate {i}" for i in range(10)]
        vectors = await embed_queries(model, texts)
        assert len(server.requests) == 1
        assert server.requests[0]["json"]["input"] == texts
        for text, vector in zip(texts, vectors, strict=True):
            assert cosine(vector, await model.embed_query(text)) > 0.9999
    finally:
        await model.aclose()


async def test_empty_texts_are_not_sent(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32))
    try:
        vectors = await model.embed_documents(["", "real text", "   "])
        assert vectors[0] == [0.0] * 32
        assert vectors[2] == [0.0] * 32
        assert server.requests[0]["json"]["input"] == ["real text"]
    finally:
        await model.aclose()


async def test_server_errors_are_retried_then_succeed(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, max_retries=2))
    try:
        server.script = [Scripted(503, {"error": "busy"}), Scripted(429, {"error": "slow down"})]
        assert len(await model.embed_query("hello")) == 32
        assert len(server.requests) == 3
    finally:
        await model.aclose()


async def test_retries_run_out_with_the_server_reason(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, max_retries=1))
    try:
        server.script = [Scripted(500, {"error": {"message": "exploded"}})] * 2
        with pytest.raises(EmbeddingServerError, match="exploded") as info:
            await model.embed_query("hello")
        assert info.value.status == 500
    finally:
        await model.aclose()


async def test_a_refused_request_is_not_retried_and_the_key_never_shows(
    server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32))
    try:
        server.script = [Scripted(401, {"error": {"message": f"Incorrect API key: {KEY}"}})]
        with pytest.raises(EmbeddingRequestError) as info:
            await model.embed_query("hello")
        assert info.value.status == 401
        assert KEY not in str(info.value)
        assert "***" in str(info.value)
        assert len(server.requests) == 1
        assert KEY not in repr(config(server))
        assert KEY not in caplog.text
    finally:
        await model.aclose()


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        {"data": "nope"},
        {"data": [{"index": 0, "embedding": [0.1] * 31}]},
        {"data": [{"index": 0, "embedding": [0.1] * 32}, {"index": 1, "embedding": [0.1] * 32}]},
        {"data": [{"index": 0, "embedding": "base64?"}]},
        {"data": [{"index": 0, "embedding": [float("nan")] * 32}]},
        {"data": [{"index": 5, "embedding": [0.1] * 32}]},
    ],
)
async def test_unusable_answers_are_response_errors(server: EmbeddingServer, body: object) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32))
    try:
        server.script = [Scripted(200, body)]
        with pytest.raises(EmbeddingResponseError):
            await model.embed_query("hello")
    finally:
        await model.aclose()


async def test_a_hanging_server_times_out(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, timeout=0.3, max_retries=0))
    try:
        server.script = [Scripted(delay=2.0)]
        with pytest.raises(EmbeddingTimeout, match="within"):
            await model.embed_query("hello")
    finally:
        await model.aclose()


async def test_an_unreachable_endpoint_is_a_connection_error(server: EmbeddingServer) -> None:
    base = server.base_url
    server.httpd.shutdown()
    server.httpd.server_close()
    model = OpenAIEmbedder(
        EmbeddingOpenaiConfig(base_url=base, model="m", dimensions=8, max_retries=0, api_key=KEY)
    )
    try:
        with pytest.raises(EmbeddingConnectionError) as info:
            await model.embed_query("hello")
        assert KEY not in str(info.value)
    finally:
        await model.aclose()


async def test_the_plugin_is_disabled_until_configured(tmp_path: Path) -> None:
    async with running_host([EmbeddingOpenai()], data_dir=tmp_path) as host:
        (info,) = host.plugins()
        assert info.state == "disabled"
        assert "base_url" in (info.error or "")


async def test_the_plugin_provides_the_endpoint(tmp_path: Path, server: EmbeddingServer) -> None:
    table = {"base_url": server.base_url, "model": "m", "api_key": KEY}
    async with running_host(
        [EmbeddingOpenai()], {"plugins": {"embedding-openai": table}}, data_dir=tmp_path
    ) as host:
        (info,) = host.plugins()
        assert info.state == "active", info.error
        model = host.capability(embedding).use
        assert model.dim == 32
        assert len(await model.embed_documents(["a", "b"])) == 2


async def test_a_wrong_model_is_a_start_error_with_the_server_reason(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    server.script = [Scripted(404, {"error": {"message": "model 'nope' not found"}})]
    table = {"base_url": server.base_url, "model": "nope", "api_key": KEY}
    async with running_host(
        [EmbeddingOpenai()], {"plugins": {"embedding-openai": table}}, data_dir=tmp_path
    ) as host:
        (info,) = host.plugins()
        assert info.state == "error"
        assert "not found" in (info.error or "")
        assert KEY not in (info.error or "")


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="base_url"):
        EmbeddingOpenaiConfig(base_url="ftp://x")
    with pytest.raises(ValueError, match="batch_size"):
        EmbeddingOpenaiConfig(batch_size=0)
    with pytest.raises(TypeError, match="dimensions"):
        EmbeddingOpenaiConfig(dimensions="8")  # type: ignore[arg-type]


# -- the HTTP behaviour the llm side already had (issue 24): these failed before the merge --


async def test_retry_after_is_honoured(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, timeout=5.0))
    try:
        server.script = [Scripted(429, {"error": "slow down"}, headers={"Retry-After": "1"})]
        started = time.monotonic()
        assert len(await model.embed_query("hello")) == 32
        assert time.monotonic() - started >= 1.0
        assert len(server.requests) == 2
    finally:
        await model.aclose()


async def test_a_retry_after_past_the_deadline_reports_the_cause_at_once(
    server: EmbeddingServer,
) -> None:
    model = await OpenAIEmbedder.connect(config(server, dimensions=32, timeout=2.0))
    try:
        server.script = [Scripted(429, {"error": "quota"}, headers={"Retry-After": "120"})]
        started = time.monotonic()
        with pytest.raises(EmbeddingServerError, match="quota") as info:
            await model.embed_query("hello")
        assert time.monotonic() - started < 1.5
        assert info.value.status == 429
        assert len(server.requests) == 1
    finally:
        await model.aclose()


async def test_the_start_probe_keeps_the_deadline(server: EmbeddingServer) -> None:
    """Learning ``dim`` at start is a request like any other: ``timeout`` bounds it, waits
    included, so a failing endpoint cannot hold the host's start for the whole backoff."""
    server.script = [Scripted(503, {"error": "warming up"})] * 4
    started = time.monotonic()
    with pytest.raises(EmbeddingServerError, match="warming up"):
        await OpenAIEmbedder.connect(config(server, timeout=0.5, max_retries=3, retry_backoff=1.0))
    assert time.monotonic() - started < 1.5


async def test_a_response_body_past_the_cap_is_refused(server: EmbeddingServer) -> None:
    model = await OpenAIEmbedder.connect(
        config(server, dimensions=32, max_response_bytes=65_536, max_retries=0)
    )
    try:
        server.script = [Scripted(200, "x" * 200_000)]
        with pytest.raises(
            EmbeddingResponseError, match=r"larger than 65536 bytes.*max_response_bytes"
        ):
            await model.embed_query("hello")
        assert len(await model.embed_query("small enough")) == 32
    finally:
        await model.aclose()


def test_the_response_cap_defaults_to_a_few_megabytes() -> None:
    cap = EmbeddingOpenaiConfig(base_url="http://127.0.0.1:1/v1", model="m").max_response_bytes
    assert 1024 * 1024 <= cap <= 64 * 1024 * 1024
