"""Rough edges a new user meets in the first ten minutes, each pinned down.

A misspelt ``[plugins] disabled`` name, an unterminated ``${VAR``, a broken table of one
plugin, the ``aalis init`` template's model example, output piped into ``head``, an empty
session id, ``export --help``, and ``clear --all`` without asking. Commands run as real
processes where the behaviour involves the process (pipes, exit codes), else through
click's runner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aalis_core import ConfigError, Host
from aalis_core._cli import cli, render_template

pytestmark = pytest.mark.timeout(120)

AALIS = str(Path(sys.executable).with_name("aalis"))
PLUGINS = "memory-sqlite,memory-cli,llm-openai,chat,memory-summary"


def run(
    tmp_path: Path, *args: str, config: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    if config is not None:
        (tmp_path / "aalis.toml").write_text(config, encoding="utf-8")
    environ = {**os.environ, "AALIS_LOAD_PLUGINS": PLUGINS, **(env or {})}
    environ.pop("AALIS_CONFIG", None)
    environ.pop("AALIS_DEBUG", None)
    return subprocess.run(
        [AALIS, *args], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=60
    )


# -- configuration -------------------------------------------------------------------------


def test_a_misspelt_disabled_name_is_an_error_listing_the_installed_plugins() -> None:
    with pytest.raises(ConfigError) as caught:
        Host({"plugins": {"disabled": ["memory-sqlit"]}})
    text = str(caught.value)
    assert "'memory-sqlit'" in text
    assert "installed plugins:" in text
    assert "memory-sqlite" in text.split("installed plugins:")[1]
    assert (caught.value.table, caught.value.key) == ("plugins", "disabled")


@pytest.mark.parametrize("value", ["${AALIS_T_UNTERMINATED", "prefix-${AALIS_T_X-and-more"])
def test_an_unterminated_env_reference_is_an_error(value: str) -> None:
    with pytest.raises(ConfigError, match="unterminated environment reference"):
        Host({"host": {"data_dir": value}}, discover=False)


def test_an_unset_variable_in_one_plugins_table_fails_only_that_plugin(tmp_path: Path) -> None:
    config = (
        '[host]\ndata_dir = "data"\n\n[plugins.llm-openai]\n'
        'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key = "${AALIS_T_NOPE}"\n'
    )
    (tmp_path / "aalis.toml").write_text(config, encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k != "AALIS_T_NOPE"}
    listing = subprocess.run(
        [AALIS, "plugins", "--json"],
        cwd=tmp_path,
        env={**environ, "AALIS_LOAD_PLUGINS": PLUGINS},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert rows["llm-openai"]["state"] == "error"
    assert "AALIS_T_NOPE is not set" in rows["llm-openai"]["error"]
    assert rows["memory-sqlite"]["state"] == "active"
    sessions = subprocess.run(
        [AALIS, "sessions"],
        cwd=tmp_path,
        env={**environ, "AALIS_LOAD_PLUGINS": PLUGINS},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sessions.returncode == 0, sessions.stderr


def test_the_init_templates_model_example_works_once_uncommented(tmp_path: Path) -> None:
    template = render_template()
    lines = template.splitlines()
    start = lines.index("# [plugins.llm-openai]")
    block: list[str] = []
    for line in lines[start:]:
        if not line.startswith("# "):
            break
        block.append(line[2:])
    assert any(line.startswith("base_url =") for line in block)
    assert any(line.startswith("model =") for line in block)
    config = '[host]\ndata_dir = "data"\n' + "\n".join(block) + "\n"
    with_key = run(
        tmp_path, "plugins", "--json", config=config, env={"OPENAI_API_KEY": "sk-t-0000000000"}
    )
    assert with_key.returncode == 0, with_key.stderr
    rows = {row["name"]: row for row in json.loads(with_key.stdout)}
    assert rows["llm-openai"]["state"] == "active", rows["llm-openai"]
    assert "sk-t-0000000000" not in with_key.stdout + with_key.stderr


# -- pipes ---------------------------------------------------------------------------------


def _seed(config: Path, sessions: int, messages: int) -> None:
    """Enough output that it cannot fit in a pipe's buffer (so the writer meets EPIPE)."""
    import asyncio

    from aalis_api_memory import memory
    from aalis_schema_message import Message

    async def main() -> None:
        async with Host.from_config(config, discover=True) as host:
            mem = host.capability(memory).use
            for s in range(sessions):
                await mem.save_message(f"session-{s:05d}", Message(role="user", content="hi"))
            for m in range(messages):
                text = f"message {m} " + "x" * 200
                await mem.save_message("p", Message(role="user", content=text))

    asyncio.run(main())


@pytest.mark.parametrize(
    "command",
    [
        ["chat", "--session", "c", "--script", "script.txt"],
        ["history", "p", "--limit", "all"],
        ["sessions"],
    ],
)
def test_output_piped_into_head_ends_quietly(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "aalis.toml"
    config.write_text('[host]\ndata_dir = "data"\n', encoding="utf-8")
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", PLUGINS)
    if command[0] == "chat":
        lines = "\n".join(f"line {i} " + "y" * 300 for i in range(400))
        (tmp_path / "script.txt").write_text(lines + "\n", encoding="utf-8")
    else:
        _seed(config, sessions=3000 if command[0] == "sessions" else 0, messages=600)
    environ = {**os.environ, "AALIS_LOAD_PLUGINS": PLUGINS, "AALIS_CONFIG": str(config)}
    environ.pop("AALIS_DEBUG", None)
    shell = f"set -o pipefail; {AALIS} {' '.join(command)} | head -3"
    result = subprocess.run(
        ["bash", "-c", shell], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=60
    )
    assert len(result.stdout.splitlines()) == 3
    assert "Broken pipe" not in result.stderr
    assert "Errno 32" not in result.stderr
    assert "Exception ignored" not in result.stderr
    assert result.returncode == 0, result.stderr


# -- sessions, export, clear ----------------------------------------------------------------


@pytest.fixture
def aalis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "aalis.toml").write_text('[host]\ndata_dir = "data"\n', encoding="utf-8")
    monkeypatch.setenv("AALIS_CONFIG", str(tmp_path / "aalis.toml"))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli")
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, stdin: str | None = None) -> Any:
        return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)

    return invoke


@pytest.mark.parametrize(
    "args",
    [["history", ""], ["clear", "--session", ""], ["export", ""]],
)
def test_an_empty_session_id_is_refused(aalis: Any, args: list[str]) -> None:
    result = aalis(*args)
    assert result.exit_code == 2
    assert "must not be empty" in result.output


def test_export_help_shows_the_session_as_optional(aalis: Any) -> None:
    usage = aalis("export", "--help").output.splitlines()[0]
    assert "[SESSION]" in usage


def test_clear_all_without_a_terminal_needs_yes(aalis: Any) -> None:
    refused = aalis("clear", "--all")
    assert refused.exit_code == 2
    assert "--yes" in refused.output
    done = aalis("clear", "--all", "--yes")
    assert done.exit_code == 0, done.output
    assert "ok     context" in done.output


def test_clear_all_on_a_terminal_asks_first(aalis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from aalis_memory_tools import _cli_plugin as cli_plugin

    monkeypatch.setattr(cli_plugin, "_interactive", lambda: True)
    declined = aalis("clear", "--all", stdin="n\n")
    assert declined.exit_code == 1
    assert "Nothing cleared" in declined.output
    assert "ok     context" not in declined.output
    accepted = aalis("clear", "--all", stdin="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "ok     context" in accepted.output
