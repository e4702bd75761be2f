from typing import Any

from aalis_api_llm import llm
from aalis_plugin_llm_openai import LlmOpenai
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


def test_loading_the_plugin_does_not_import_httpx() -> None:
    import subprocess
    import sys

    code = "import sys, aalis_plugin_llm_openai.plugin; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
