"""The two plugins of the distribution, ``llm-openai`` and ``embedding-openai``, as a host
sees them (the embedder's own start-up cases are in test_embedding.py)."""

import importlib.metadata
import socket
import subprocess
import sys
from typing import Any

from aalis_api_embedding import embedding
from aalis_api_llm import llm
from aalis_plugin_openai import EmbeddingOpenai, LlmOpenai
from aalis_schema_message import Message

from aalis_core import Host


async def test_unconfigured_it_is_disabled_not_an_error() -> None:
    async with Host({}, [LlmOpenai()], discover=False) as host:
        [info] = host.plugins()
        assert info.state == "disabled"
        assert info.error is not None
        assert "base_url" in info.error
        assert not host.capability(llm).present


async def test_configured_it_provides_llm(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    chat_server.script(reply_type(body=completion_body("hi from the server")))
    config = {
        "plugins": {
            "llm-openai": {
                "base_url": chat_server.base_url,
                "model": "m1",
                "api_key": "sk-secret-value-123456",
                "context_window": 16000,
            }
        }
    }
    async with Host(config, [LlmOpenai()], discover=False) as host:
        [info] = host.plugins()
        assert info.state == "active"
        model = host.capability(llm).use
        assert model.id == "llm-openai:m1"
        assert model.context_window == 16000
        result = await model.chat([Message(role="user", content="hello")])
        assert result.content == "hi from the server"


def test_loading_the_plugins_does_not_import_httpx() -> None:
    code = (
        "import sys, aalis_plugin_openai, aalis_plugin_openai._plugin;print('httpx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_distribution_two_entry_points_under_the_old_plugin_names() -> None:
    dist = importlib.metadata.distribution("aalis-plugin-openai")
    assert dist.version == "0.2.0"
    points = {ep.name: ep.value for ep in dist.entry_points if ep.group == "aalis.plugins"}
    assert points == {
        "llm-openai": "aalis_plugin_openai:LlmOpenai",
        "embedding-openai": "aalis_plugin_openai:EmbeddingOpenai",
    }


async def test_a_failing_embedding_endpoint_leaves_the_chat_model_running(
    chat_server: Any, reply_type: Any, completion_body: Any
) -> None:
    """Why two plugins: each is configured, disabled and failing on its own."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    chat_server.script(reply_type(body=completion_body("still here")))
    config = {
        "plugins": {
            "llm-openai": {"base_url": chat_server.base_url, "model": "chat-m"},
            "embedding-openai": {"base_url": closed, "model": "embed-m", "max_retries": 0},
        }
    }
    async with Host(config, [LlmOpenai(), EmbeddingOpenai()], discover=False) as host:
        states = {info.name: info.state for info in host.plugins()}
        assert states == {"llm-openai": "active", "embedding-openai": "error"}
        assert not host.capability(embedding).present
        reply = await host.capability(llm).use.chat([Message(role="user", content="hi")])
        assert reply.content == "still here"
