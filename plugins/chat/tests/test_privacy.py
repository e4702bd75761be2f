"""Private by default in the chat: who speaks is stamped, and the offline stand-in never
copies recalled, summarised or system text into a reply that is then stored."""

from __future__ import annotations

import getpass
import math
import os
from typing import Any

import pytest
from aalis_agent import SUMMARY_HEADER, PromptBlock, PromptRequest
from aalis_api_memory import Person, compression, memory, person_of
from aalis_plugin_chat import Chat, ChatConfig, StandInModel
from aalis_plugin_chat._login import os_login
from aalis_schema_message import Message

from aalis_core import Host
from aalis_core._markers import hookimpl
from aalis_core._plugin import Plugin

inmemory = pytest.importorskip("aalis_plugin_memory_inmemory")

SECRETS = ("alice-recalled-pin-4411", "summary-secret-passport-X9", "system-secret-key-77")


class Recall(Plugin):
    """Contributes a block with another person's secret, as a recall block would."""

    name = "fake-recall"

    @hookimpl
    async def prompt_contributions(self, request: PromptRequest) -> list[PromptBlock]:
        return [PromptBlock(content=f"Earlier, in session alice: my pin is {SECRETS[0]}")]


class Summary:
    """A compression service whose summary holds a secret."""

    class Record:
        text = f"The user gave their passport number {SECRETS[1]}."
        model = "extractive"

    async def summary(self, session_id: str) -> Any:
        return Summary.Record()


class WithSummary(Plugin):
    name = "fake-summary"
    provides = (compression,)

    async def start(self, ctx: Any) -> None:
        ctx.provide(compression, Summary())


def make_host(*extra: Plugin, config: dict[str, Any] | None = None) -> Host:
    return Host(config or {}, [inmemory.MemoryInmemory(), Chat(), *extra], discover=False)


# -- persons ------------------------------------------------------------------------------


async def test_the_chat_stamps_cli_and_the_os_login_on_user_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOGNAME", "alice-login")
    async with make_host() as host:
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        assert not (await session.handle("hello")).err
        user, reply = await host.capability(memory).use.get_history("s", math.inf)
    assert getpass.getuser() == "alice-login"
    assert user.metadata == {"platform": "cli", "user_id": "alice-login"}
    assert person_of(user) == Person("cli", "alice-login")
    assert person_of(reply) is None  # the stand-in's words are nobody's


async def test_a_configured_platform_is_the_persons_platform(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOGNAME", "bob")
    async with make_host(config={"plugins": {"chat": {"platform": "terminal"}}}) as host:
        session = host.plugin("chat").session("s")  # type: ignore[union-attr]
        assert not (await session.handle("hi")).err
        user, _ = await host.capability(memory).use.get_history("s", math.inf)
    assert person_of(user) == Person("terminal", "bob")


def test_without_a_login_name_the_user_is_the_numeric_account(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_login() -> str:
        raise OSError("no login name")

    fallback = f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"
    monkeypatch.setattr(getpass, "getuser", no_login)
    assert os_login() == fallback
    monkeypatch.setattr(getpass, "getuser", lambda: "  ")
    assert os_login() == fallback
    monkeypatch.setattr(getpass, "getuser", lambda: " carol ")
    assert os_login() == "carol"


def test_a_platform_that_cannot_name_a_person_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="platform"):
        ChatConfig(platform="a:b")
    with pytest.raises(ValueError, match="platform"):
        ChatConfig(platform="")


# -- the stand-in -------------------------------------------------------------------------


async def test_the_stand_in_quotes_only_the_last_user_message() -> None:
    prompt = [
        Message(role="system", content=f"Be helpful. {SECRETS[2]}"),
        Message(role="system", content=SUMMARY_HEADER + f"passport {SECRETS[1]}"),
        Message(role="user", content="an earlier question"),
        Message(role="assistant", content="an earlier answer"),
        PromptBlock(
            content=f"recalled: my pin is {SECRETS[0]}", source="memory-vector"
        ).to_message(),
        Message(role="user", content="what is on my list today?"),
    ]
    reply = await StandInModel().chat(prompt)
    assert 'You said: "what is on my list today?"' in reply.content
    for secret in SECRETS:
        for part in (secret, secret[:12], secret[-8:]):
            assert part not in reply.content, (part, reply.content)
    for text in ("earlier question", "earlier answer", "recalled", "passport", "Be helpful"):
        assert text not in reply.content


async def test_no_recalled_or_summarised_text_reaches_a_stored_reply() -> None:
    async with make_host(Recall(), WithSummary()) as host:
        session = host.plugin("chat").session("bob")  # type: ignore[union-attr]
        for text in ("what did I tell you?", "and my pin?"):
            reply = await session.handle(text)
            assert not reply.err
            for secret in SECRETS[:2]:
                assert secret not in "\n".join(reply.out)
        # the block did reach the prompt (so the test can fail), and /recall still shows it
        assert any(SECRETS[0] in block.content for block in session.last_contributions)
        stored = await host.capability(memory).use.get_history("bob", math.inf)
    text = "\n".join(m.content or "" for m in stored)
    for secret in SECRETS[:2]:
        assert secret not in text
    assert "and my pin?" in text


async def test_an_unanswered_message_of_another_person_is_not_quoted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two chats on one session: alice's question is saved, bob's turn runs before her
    reply. The prompt merges the two questions (strict chat templates want that), and
    the stand-in must still quote bob's words only."""
    monkeypatch.setenv("LOGNAME", "bob")
    async with make_host() as host:
        store = host.capability(memory).use
        await store.save_message(
            "shared",
            Message(
                role="user",
                content="alice-only: my salary is 91000",
                metadata={"platform": "cli", "user_id": "alice"},
            ),
        )
        session = host.plugin("chat").session("shared")  # type: ignore[union-attr]
        reply = await session.handle("what is the plan?")
        assert not reply.err
        stored = await store.get_history("shared", math.inf)
    assert 'You said: "what is the plan?"' in reply.out[0]
    assert "91000" not in reply.out[0]
    assert "91000" not in (stored[-1].content or "")
