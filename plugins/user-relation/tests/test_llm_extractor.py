"""The model extractor against a scripted OpenAI-compatible server on loopback, through the
real llm-openai plugin: one call per batch, facts labelled ``llm``; a failing or nonsensical
model leaves the offline result."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aalis_plugin_memory_sqlite import MemorySqlite
from aalis_plugin_openai import LlmOpenai
from aalis_plugin_user_relation import UserRelation
from aalis_plugin_user_relation._llm_extractor import parse

from aalis_core import Host

from .conftest import ADA, T0, World, said


class Script:
    """What the server answers: ``reply`` (a str), or a status code to fail with."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: str = "{}"
        self.status = 200


@pytest.fixture
def script() -> Iterator[Script]:
    state = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            state.requests.append(body)
            payload = json.dumps(
                {
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": state.reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
                }
            ).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02})
    thread.daemon = True
    thread.start()
    host, port = httpd.server_address[:2]
    state.base_url = f"http://{host}:{port}/v1"  # type: ignore[attr-defined]
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _host(tmp_path: Path, script: Script, **relation: Any) -> tuple[Host, UserRelation]:
    plugin = UserRelation()
    config = {
        "plugins": {
            "memory-sqlite": {"path": str(tmp_path / "llm.db")},
            "llm-openai": {
                "base_url": script.base_url,  # type: ignore[attr-defined]
                "model": "test-model",
                "api_key": "sk-test",
                "max_retries": 0,
            },
            "user-relation": {"extractor": "llm", **relation},
        }
    }
    return Host(config, [MemorySqlite(), LlmOpenai(), plugin], discover=False), plugin


async def _say_all(world: World, *texts: str) -> None:
    messages = [said(text, T0 + i * 1000) for i, text in enumerate(texts)]
    for message in messages:
        await world.memory.save_message("s", message)
    await world.host.emit("memory_messages_saved", session_id="s", messages=messages)
    assert await world.plugin.active()[0].settle(10.0)


async def test_one_call_per_batch_and_facts_labelled_llm(tmp_path: Path, script: Script) -> None:
    script.reply = json.dumps(
        {
            "facts": [
                {"message": 0, "attribute": "city", "value": "Lyon", "corrects": None},
                {"message": 2, "attribute": "pet", "value": "tortoise Speedy"},
            ]
        }
    )
    host, plugin = _host(tmp_path, script)
    async with host:
        world = World(host, plugin)
        await _say_all(world, "Lyon is where my flat is.", "What time is it?", "Speedy is slow.")
        facts = await world.service.facts(ADA)
    assert len(script.requests) == 1
    prompt = script.requests[0]["messages"][-1]["content"]
    assert "[0] Lyon is where my flat is." in prompt
    assert "[2] Speedy is slow." in prompt
    assert [(f.attribute, f.value, f.extractor) for f in facts] == [
        ("city", "Lyon", "llm"),
        ("pet", "tortoise Speedy", "llm"),
    ]


@pytest.mark.parametrize(("status", "reply"), [(500, "{}"), (200, "Sure! Ada lives in Lyon.")])
async def test_a_failing_model_leaves_the_offline_result(
    tmp_path: Path, script: Script, status: int, reply: str
) -> None:
    script.status, script.reply = status, reply
    host, plugin = _host(tmp_path, script)
    async with host:
        world = World(host, plugin)
        await _say_all(world, "I live in Lyon.", "I moved to Nice.")
        facts = await world.service.facts(ADA, include_superseded=True)
    assert len(script.requests) == 1
    assert [(f.value, f.current, f.extractor) for f in facts] == [
        ("Lyon", False, "offline"),
        ("Nice", True, "offline"),
    ]


async def test_over_budget_the_offline_rules_read(tmp_path: Path, script: Script) -> None:
    host, plugin = _host(tmp_path, script, llm_max_chars=10)
    async with host:
        world = World(host, plugin)
        await _say_all(world, "I live in Lyon.", "I moved to Nice.")
        facts = await world.service.facts(ADA)
    assert script.requests == []
    assert [(f.value, f.extractor) for f in facts] == [("Nice", "offline")]


def test_the_answer_must_be_the_json_asked_for() -> None:
    assert parse('```json\n{"facts": []}\n```', 1) == [[]]
    found = parse(
        '{"facts": [{"message": 0, "attribute": "Family", "value": " Mia  (sister)"}]}', 1
    )
    assert found is not None
    assert found[0][0].attribute == "family"
    assert found[0][0].value == "Mia (sister)"  # a closing bracket is part of the value
    assert parse('{"facts": [{"message": 3, "attribute": "city", "value": "x"}]}', 2) is None
    assert parse('{"facts": [{"message": 0, "attribute": 1, "value": "x"}]}', 1) is None
    assert parse("[]", 1) is None
    assert parse("not json", 1) is None
