"""The Aalis agent runtime: run a turn, build its prompt, save, undo, clear and forget.

What an agent does around each model call (docs/reference/turn.md), written once so every
host, chat and framework adapter behaves alike. It depends on the memory contract; backends
never depend on it.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_agent._bridge import (
        BridgeDeadlock as BridgeDeadlock,
        LoopBridge as LoopBridge,
        host_and_bridge as host_and_bridge,
    )
    from aalis_agent._clearing import (
        clear_types as clear_types,
        memory_capability as memory_capability,
        run_clear as run_clear,
    )
    from aalis_agent._forgetting import (
        forget_person as forget_person,
    )
    from aalis_agent._hookspecs import (
        EVENTS as EVENTS,
        prompt_contributions as prompt_contributions,
        token_usage as token_usage,
    )
    from aalis_agent._prompt import (
        DEFAULT_CONTRIBUTION_TIMEOUT as DEFAULT_CONTRIBUTION_TIMEOUT,
        PromptBlock as PromptBlock,
        PromptRequest as PromptRequest,
        collect_prompt_blocks as collect_prompt_blocks,
        insert_prompt_blocks as insert_prompt_blocks,
    )
    from aalis_agent._saving import (
        SAVED_EVENT as SAVED_EVENT,
        SESSION_CLOCK as SESSION_CLOCK,
        SessionClock as SessionClock,
        announce_saved as announce_saved,
        save_conversation as save_conversation,
        stamped as stamped,
    )
    from aalis_agent._sync_host import (
        SyncHost as SyncHost,
        SyncMemory as SyncMemory,
    )
    from aalis_agent._tokens import (
        MESSAGE_OVERHEAD as MESSAGE_OVERHEAD,
        estimate_message_tokens as estimate_message_tokens,
        estimate_text_tokens as estimate_text_tokens,
        is_cjk as is_cjk,
        model_text as model_text,
    )
    from aalis_agent._turn import (
        SUMMARY_HEADER as SUMMARY_HEADER,
        PromptPlan as PromptPlan,
        TurnBusy as TurnBusy,
        TurnError as TurnError,
        TurnModelFailed as TurnModelFailed,
        TurnReplyNotSaved as TurnReplyNotSaved,
        TurnResult as TurnResult,
        TurnSettings as TurnSettings,
        add_contributions as add_contributions,
        build_prompt as build_prompt,
        run_turn as run_turn,
        session_summary as session_summary,
    )
    from aalis_agent._turn_lease import (
        TURN_LEASE_TTL_MS as TURN_LEASE_TTL_MS,
        hold_turn as hold_turn,
    )
    from aalis_agent._undo import (
        UndoError as UndoError,
        UndoOutcome as UndoOutcome,
        undo_last_turn as undo_last_turn,
    )
    from aalis_agent._usage import (
        check_context_window as check_context_window,
        report_usage as report_usage,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_agent._bridge": "BridgeDeadlock LoopBridge host_and_bridge",
    "aalis_agent._clearing": "clear_types memory_capability run_clear",
    "aalis_agent._forgetting": "forget_person",
    "aalis_agent._hookspecs": "EVENTS prompt_contributions token_usage",
    "aalis_agent._prompt": (
        "DEFAULT_CONTRIBUTION_TIMEOUT PromptBlock PromptRequest "
        "collect_prompt_blocks insert_prompt_blocks"
    ),
    "aalis_agent._saving": (
        "SAVED_EVENT SESSION_CLOCK SessionClock announce_saved save_conversation stamped"
    ),
    "aalis_agent._sync_host": "SyncHost SyncMemory",
    "aalis_agent._tokens": (
        "MESSAGE_OVERHEAD estimate_message_tokens estimate_text_tokens is_cjk model_text"
    ),
    "aalis_agent._turn": (
        "PromptPlan SUMMARY_HEADER TurnBusy TurnError TurnModelFailed "
        "TurnReplyNotSaved TurnResult TurnSettings add_contributions "
        "build_prompt run_turn session_summary"
    ),
    "aalis_agent._turn_lease": "TURN_LEASE_TTL_MS hold_turn",
    "aalis_agent._undo": "UndoError UndoOutcome undo_last_turn",
    "aalis_agent._usage": "check_context_window report_usage",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "DEFAULT_CONTRIBUTION_TIMEOUT",
    "EVENTS",
    "MESSAGE_OVERHEAD",
    "SAVED_EVENT",
    "SESSION_CLOCK",
    "SUMMARY_HEADER",
    "TURN_LEASE_TTL_MS",
    "BridgeDeadlock",
    "LoopBridge",
    "PromptBlock",
    "PromptPlan",
    "PromptRequest",
    "SessionClock",
    "SyncHost",
    "SyncMemory",
    "TurnBusy",
    "TurnError",
    "TurnModelFailed",
    "TurnReplyNotSaved",
    "TurnResult",
    "TurnSettings",
    "UndoError",
    "UndoOutcome",
    "add_contributions",
    "announce_saved",
    "build_prompt",
    "check_context_window",
    "clear_types",
    "collect_prompt_blocks",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "forget_person",
    "hold_turn",
    "host_and_bridge",
    "insert_prompt_blocks",
    "is_cjk",
    "memory_capability",
    "model_text",
    "prompt_contributions",
    "report_usage",
    "run_clear",
    "run_turn",
    "save_conversation",
    "session_summary",
    "stamped",
    "token_usage",
    "undo_last_turn",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
