"""The agent's hookspecs: the prompt contribution and the token figures."""

from __future__ import annotations

import pluggy
from aalis_agent import _hookspecs as hookspecs


def test_the_agent_declares_its_two_hooks() -> None:
    manager = pluggy.PluginManager("aalis")
    manager.add_hookspecs(hookspecs)
    expected = {
        "prompt_contributions": ["request"],
        "token_usage": ["session_id", "platform", "usage"],
    }
    for name, args in expected.items():
        caller = getattr(manager.hook, name)
        assert caller.spec is not None
        assert list(caller.spec.argnames) == args
    assert hookspecs.EVENTS == ("token_usage",)
    assert not hasattr(manager.hook, "memory_clear")
