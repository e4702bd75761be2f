"""``aalis history SESSION`` shows the summary the model sees, read through ``compression``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import compression, memory
from aalis_schema_message import Message
from click.testing import CliRunner

from aalis_core import Host
from aalis_core._cli import cli

pytest.importorskip("aalis_plugin_memory_sqlite")

T0 = 1_700_000_000_000


def _run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def test_history_prints_the_summary_before_the_active_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "aalis.toml"
    config.write_text(
        '[host]\ndata_dir = "data"\n\n[capabilities.memory]\nprovider = "memory-sqlite"\n\n'
        '[plugins.memory-summary]\nsummariser = "extractive"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli,memory-summary")
    monkeypatch.chdir(tmp_path)

    async def talk() -> None:
        async with Host.from_config(config) as host:
            store = host.capability(memory).use
            lines = [
                ("user", "My name is Ada and I fly to Lisbon on 12 May."),
                ("assistant", "Noted: Lisbon on 12 May."),
                ("user", "What should I pack?"),
                ("assistant", "Light clothes."),
            ]
            for i, (role, text) in enumerate(lines):
                await store.save_message("s", Message(role=role, content=text, timestamp=T0 + i))

    async def seed() -> str:
        async with Host.from_config(config) as host:
            store = host.capability(memory).use
            await host.capability(compression).use.compress("s")
            record = await host.capability(compression).use.summary("s")
            assert record is not None
            await store.save_message(
                "s", Message(role="user", content="And the weather?", timestamp=T0 + 10)
            )
            return str(record.text)

    asyncio.run(talk())
    assert "summary (" not in _run("history", "s").stdout  # nothing to show yet
    text = asyncio.run(seed())
    lines = _run("history", "s").stdout.splitlines()
    assert lines[0].startswith("summary (by extractive, covers ")
    body = [line[4:] for line in lines[1:] if line.startswith("    ")]
    assert "\n".join(body[: len(text.splitlines())]) == text
    assert lines[-1].endswith("user: And the weather?")
    assert any("earlier messages compressed" in line for line in lines)
    # --json stays an array of the messages, as before
    data = json.loads(_run("history", "s", "--json").stdout)
    assert [item["content"] for item in data][-1] == "And the weather?"
