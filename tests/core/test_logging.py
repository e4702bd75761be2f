"""Logging (SPEC §2.5): one bound logger per plugin, credentials never in a line."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from aalis_core import ConfigError, Host, Plugin, get_logger, redact
from aalis_core._logging import configure_logging
from aalis_core.testing import capture_logs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mongodb://user:pass@host/db", "mongodb://user:***@host/db"),
        (
            "mongodb+srv://admin:s3cr%40t@cluster0.x.net/?w=1",
            "mongodb+srv://admin:***@cluster0.x.net/?w=1",
        ),
        (
            "postgres://u:p@127.0.0.1:5432/x and redis://:pw@r:6379",
            "postgres://u:***@127.0.0.1:5432/x and redis://:***@r:6379",
        ),
        ("mongodb://host:27017/db", "mongodb://host:27017/db"),
        ("key sk-abcdefghijklmnop1234", "key sk-***"),
        ("sk-proj-AbC_dEf-123456789", "sk-***"),
        ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer ***"),
        ("api_key=12345678 next", "api_key=*** next"),
        ('{"api_key": "abcdef"}', '{"api_key": "***"}'),
        ("password: hunter2", "password: ***"),
        ("nothing secret here", "nothing secret here"),
        ("", ""),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_log_lines_are_redacted_including_tracebacks() -> None:
    with capture_logs() as logs:
        log = get_logger("memory-mongodb")
        log.info("connecting", uri="mongodb://app:topsecret@db:27017/aalis")
        try:
            raise ConnectionError("auth failed for mongodb://app:topsecret@db:27017")
        except ConnectionError:
            log.exception("connect failed")
        log.warning("request", headers={"Authorization": "Bearer sk-live-abcdefghijk"})
        log.info("keys", values=["api_key=abcdef123"])
    assert "topsecret" not in logs.text
    assert "abcdefghijk" not in logs.text
    assert "abcdef123" not in logs.text
    lines = logs.lines
    assert lines[0]["uri"] == "mongodb://app:***@db:27017/aalis"
    assert lines[0]["plugin"] == "memory-mongodb"
    assert "mongodb://app:***@db:27017" in lines[1]["exception"]


async def test_plugin_error_messages_are_redacted(make_host: Any) -> None:
    class Leaky(Plugin):
        name = "leaky"

        async def start(self, ctx: Any) -> None:
            raise RuntimeError("cannot reach mongodb://root:pw123@db:27017 (api_key=xyz789)")

    with capture_logs() as logs:
        async with make_host(Leaky()) as host:
            error = host.plugins()[0].error or ""
    assert "pw123" not in error
    assert "xyz789" not in error
    assert "mongodb://root:***@db:27017" in error
    assert "pw123" not in logs.text
    failed = [line for line in logs.lines if line["event"] == "plugin failed"]
    assert failed[0]["plugin"] == "leaky"


def test_config_error_messages_are_redacted() -> None:
    with pytest.raises(ConfigError) as err:
        Host({"host": {"data_dir": 3, "log_level": "mongodb://u:secretpw@h"}}, discover=False)
    assert "secretpw" not in str(err.value)


def test_json_format_and_level_filter() -> None:
    stream = io.StringIO()
    configure_logging("warning", "json", stream=stream)
    try:
        log = get_logger("p")
        log.info("hidden")
        log.warning("shown", n=1)
    finally:
        configure_logging()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["event"], line["level"], line["plugin"]) for line in lines] == [
        ("shown", "warning", "p"),
    ]


def test_console_format_on_a_tty() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    configure_logging("info", stream=stream)
    try:
        get_logger("p").info("hello", uri="redis://u:pw@h")
    finally:
        configure_logging()
    text = stream.getvalue()
    assert "hello" in text
    assert not text.lstrip().startswith("{")
    assert "pw@" not in text


def test_unknown_level_rejected() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("loud")
