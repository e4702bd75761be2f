"""``aalis compress SESSION`` takes its session id the way every memory command does."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aalis_core._cli import cli

pytest.importorskip("aalis_plugin_memory_sqlite")


def test_an_empty_session_id_is_refused_before_a_host_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "aalis.toml"
    config.write_text(
        '[host]\ndata_dir = "data"\n\n[capabilities.memory]\nprovider = "memory-sqlite"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AALIS_CONFIG", str(config))
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "memory-sqlite,memory-cli,memory-summary")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["compress", ""])
    assert result.exit_code == 2, result.output
    assert "a session id must not be empty" in result.output
    assert not (tmp_path / "data").exists()  # refused at the command line: nothing opened
