"""The Aalis agent runtime: run a turn, build its prompt, save, undo, clear and forget.

What an agent does around each model call (docs/reference/turn.md), written once so every
host, chat and framework adapter behaves alike. It depends on the memory contract; backends
never depend on it.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_agent.bridge import (
        BridgeDeadlock as BridgeDeadlock,
    )
    from aalis_agent.bridge import (
        LoopBridge as LoopBridge,
    )
    from aalis_agent.clearing import (
        clear_types as clear_types,
    )
    from aalis_agent.clearing import (
        memory_capability as memory_capability,
    )
    from aalis_agent.clearing import (
        run_clear as run_clear,
    )
    from aalis_agent.forgetting import (
        forget_person as forget_person,
    )
    from aalis_agent.hookspecs import (
        EVENTS as EVENTS,
    )
    from aalis_agent.hookspecs import (
        prompt_contributions as prompt_contributions,
    )
    from aalis_agent.hookspecs import (
        token_usage as token_usage,
    )
    from aalis_agent.prompt import (
        DEFAULT_CONTRIBUTION_TIMEOUT as DEFAULT_CONTRIBUTION_TIMEOUT,
    )
    from aalis_agent.prompt import (
        PromptBlock as PromptBlock,
    )
    from aalis_agent.prompt import (
        PromptRequest as PromptRequest,
    )
    from aalis_agent.prompt import (
        collect_prompt_blocks as collect_prompt_blocks,
    )
    from aalis_agent.prompt import (
        insert_prompt_blocks as insert_prompt_blocks,
    )
    from aalis_agent.saving import (
        SAVED_EVENT as SAVED_EVENT,
    )
    from aalis_agent.saving import (
        SESSION_CLOCK as SESSION_CLOCK,
    )
    from aalis_agent.saving import (
        SessionClock as SessionClock,
    )
    from aalis_agent.saving import (
        announce_saved as announce_saved,
    )
    from aalis_agent.saving import (
        save_conversation as save_conversation,
    )
    from aalis_agent.saving import (
        stamped as stamped,
    )
    from aalis_agent.sync_host import (
        SyncHost as SyncHost,
    )
    from aalis_agent.sync_host import (
        SyncMemory as SyncMemory,
    )
    from aalis_agent.tokens import (
        MESSAGE_OVERHEAD as MESSAGE_OVERHEAD,
    )
    from aalis_agent.tokens import (
        estimate_message_tokens as estimate_message_tokens,
    )
    from aalis_agent.tokens import (
        estimate_text_tokens as estimate_text_tokens,
    )
    from aalis_agent.tokens import (
        is_cjk as is_cjk,
    )
    from aalis_agent.tokens import (
        model_text as model_text,
    )
    from aalis_agent.turn import (
        SUMMARY_HEADER as SUMMARY_HEADER,
    )
    from aalis_agent.turn import (
        ModelReply as ModelReply,
    )
    from aalis_agent.turn import (
        ModelUsage as ModelUsage,
    )
    from aalis_agent.turn import (
        PromptPlan as PromptPlan,
    )
    from aalis_agent.turn import (
        TurnBusy as TurnBusy,
    )
    from aalis_agent.turn import (
        TurnError as TurnError,
    )
    from aalis_agent.turn import (
        TurnModel as TurnModel,
    )
    from aalis_agent.turn import (
        TurnModelFailed as TurnModelFailed,
    )
    from aalis_agent.turn import (
        TurnReplyNotSaved as TurnReplyNotSaved,
    )
    from aalis_agent.turn import (
        TurnResult as TurnResult,
    )
    from aalis_agent.turn import (
        TurnSettings as TurnSettings,
    )
    from aalis_agent.turn import (
        add_contributions as add_contributions,
    )
    from aalis_agent.turn import (
        build_prompt as build_prompt,
    )
    from aalis_agent.turn import (
        run_turn as run_turn,
    )
    from aalis_agent.turn import (
        session_summary as session_summary,
    )
    from aalis_agent.turn_lease import (
        TURN_LEASE_TTL_MS as TURN_LEASE_TTL_MS,
    )
    from aalis_agent.turn_lease import (
        hold_turn as hold_turn,
    )
    from aalis_agent.undo import (
        UndoError as UndoError,
    )
    from aalis_agent.undo import (
        UndoOutcome as UndoOutcome,
    )
    from aalis_agent.undo import (
        undo_last_turn as undo_last_turn,
    )

_EXPORTS: dict[str, str] = {
    "BridgeDeadlock": "aalis_agent.bridge",
    "LoopBridge": "aalis_agent.bridge",
    "clear_types": "aalis_agent.clearing",
    "memory_capability": "aalis_agent.clearing",
    "run_clear": "aalis_agent.clearing",
    "forget_person": "aalis_agent.forgetting",
    "EVENTS": "aalis_agent.hookspecs",
    "prompt_contributions": "aalis_agent.hookspecs",
    "token_usage": "aalis_agent.hookspecs",
    "DEFAULT_CONTRIBUTION_TIMEOUT": "aalis_agent.prompt",
    "PromptBlock": "aalis_agent.prompt",
    "PromptRequest": "aalis_agent.prompt",
    "collect_prompt_blocks": "aalis_agent.prompt",
    "insert_prompt_blocks": "aalis_agent.prompt",
    "SAVED_EVENT": "aalis_agent.saving",
    "SESSION_CLOCK": "aalis_agent.saving",
    "SessionClock": "aalis_agent.saving",
    "announce_saved": "aalis_agent.saving",
    "save_conversation": "aalis_agent.saving",
    "stamped": "aalis_agent.saving",
    "SyncHost": "aalis_agent.sync_host",
    "SyncMemory": "aalis_agent.sync_host",
    "MESSAGE_OVERHEAD": "aalis_agent.tokens",
    "estimate_message_tokens": "aalis_agent.tokens",
    "estimate_text_tokens": "aalis_agent.tokens",
    "is_cjk": "aalis_agent.tokens",
    "model_text": "aalis_agent.tokens",
    "ModelReply": "aalis_agent.turn",
    "ModelUsage": "aalis_agent.turn",
    "PromptPlan": "aalis_agent.turn",
    "SUMMARY_HEADER": "aalis_agent.turn",
    "TurnBusy": "aalis_agent.turn",
    "TurnError": "aalis_agent.turn",
    "TurnModel": "aalis_agent.turn",
    "TurnModelFailed": "aalis_agent.turn",
    "TurnReplyNotSaved": "aalis_agent.turn",
    "TurnResult": "aalis_agent.turn",
    "TurnSettings": "aalis_agent.turn",
    "add_contributions": "aalis_agent.turn",
    "build_prompt": "aalis_agent.turn",
    "run_turn": "aalis_agent.turn",
    "session_summary": "aalis_agent.turn",
    "TURN_LEASE_TTL_MS": "aalis_agent.turn_lease",
    "hold_turn": "aalis_agent.turn_lease",
    "UndoError": "aalis_agent.undo",
    "UndoOutcome": "aalis_agent.undo",
    "undo_last_turn": "aalis_agent.undo",
}

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
    "ModelReply",
    "ModelUsage",
    "PromptBlock",
    "PromptPlan",
    "PromptRequest",
    "SessionClock",
    "SyncHost",
    "SyncMemory",
    "TurnBusy",
    "TurnError",
    "TurnModel",
    "TurnModelFailed",
    "TurnReplyNotSaved",
    "TurnResult",
    "TurnSettings",
    "UndoError",
    "UndoOutcome",
    "add_contributions",
    "announce_saved",
    "build_prompt",
    "clear_types",
    "collect_prompt_blocks",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "forget_person",
    "hold_turn",
    "insert_prompt_blocks",
    "is_cjk",
    "memory_capability",
    "model_text",
    "prompt_contributions",
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
