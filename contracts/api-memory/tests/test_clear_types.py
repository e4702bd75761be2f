"""The clearing value types and the hookspecs module."""

from __future__ import annotations

import pluggy
import pytest
from aalis_api_memory import (
    ClearRequest,
    ClearResult,
    ClearType,
    TextRef,
    UnknownClearType,
    _hookspecs as hookspecs,
)


def test_text_ref_prints_its_fallback() -> None:
    ref = TextRef("memory.clear.session", "conversation history cleared")
    assert str(ref) == "conversation history cleared"
    with pytest.raises(TypeError):
        TextRef(1, "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("type_id", "error"), [("", ValueError), ("a/b", ValueError), (1, TypeError)]
)
def test_clear_type_ids_are_checked(type_id: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        ClearType(type_id, "label")  # type: ignore[arg-type]


def test_clear_type_label_may_be_a_text_ref() -> None:
    assert ClearType("summary", TextRef("k", "Summaries")).label == TextRef("k", "Summaries")
    with pytest.raises(TypeError):
        ClearType("summary", None)  # type: ignore[arg-type]


def test_clear_result_fields() -> None:
    row = ClearResult("memory", True, "done", "context")
    assert (row.source, row.success, row.message, row.type) == ("memory", True, "done", "context")
    assert ClearResult("x", False, TextRef("k", "failed")).type is None
    with pytest.raises(TypeError):
        ClearResult("x", "yes", "m")  # type: ignore[arg-type]


def test_clear_request_checks_scope_and_session() -> None:
    request = ClearRequest(scope="session", session_id="s", types=("context",))
    assert request.types == ["context"]
    assert request.wants("context")
    assert not request.wants("summary")
    assert ClearRequest(scope="all").wants("anything")
    request.report("p", True, "ok", "context")
    assert request.results == [ClearResult("p", True, "ok", "context")]
    with pytest.raises(ValueError, match="scope"):
        ClearRequest(scope="everything")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ClearRequest(scope="session")
    with pytest.raises(ValueError, match="no session_id"):
        ClearRequest(scope="all", session_id="s")
    with pytest.raises(TypeError):
        ClearRequest(scope="all", types="context")  # type: ignore[arg-type]


def test_unknown_clear_type_lists_the_known() -> None:
    error = UnknownClearType(["x", "y"], ["context", "summary"])
    assert isinstance(error, ValueError)
    assert str(error) == "unknown clear type(s): x, y (known: context, summary)"
    assert "known: none" in str(UnknownClearType(["x"], []))


def test_hookspecs_declare_the_contract_hooks() -> None:
    manager = pluggy.PluginManager("aalis")
    manager.add_hookspecs(hookspecs)
    expected = {
        "memory_clear": ["request", "call_next"],
        "memory_clear_types": [],
        "memory_messages_deleted": ["session_id", "timestamps", "ids"],
        "memory_messages_rewritten": ["session_id", "messages"],
        "memory_messages_saved": ["session_id", "messages"],
        "history_changed": ["session_id"],
        "session_compressing": ["session_id", "status"],
    }
    for name, args in expected.items():
        caller = getattr(manager.hook, name)
        assert caller.spec is not None
        assert list(caller.spec.argnames) == args
    assert set(hookspecs.EVENTS) == set(expected) - {
        "memory_clear",
        "memory_clear_types",
        "memory_forget",
    }
    # The agent's hooks are not the contract's: a backend never sees a prompt.
    assert not hasattr(manager.hook, "prompt_contributions")
    assert not hasattr(manager.hook, "token_usage")
