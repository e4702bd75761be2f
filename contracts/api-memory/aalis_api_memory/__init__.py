"""The Aalis memory contract. Everything public is re-exported here."""

from typing import TYPE_CHECKING, Any

from aalis_api_memory.backend import CompleteMemoryBackend, MemoryBackend
from aalis_api_memory.bridge import BridgeDeadlock, LoopBridge
from aalis_api_memory.capabilities import COMPRESSION_ABSENT, compression, memory
from aalis_api_memory.clearing import (
    CONTEXT_CLEAR_TYPE,
    ClearRequest,
    ClearResult,
    ClearType,
    TextRef,
    UnknownClearType,
    clear_metadata_namespaces,
    clear_types,
    history_cleared,
    resolve_types,
    run_clear,
)
from aalis_api_memory.compression import (
    REASON_CODES,
    CompressionError,
    CompressionLines,
    CompressionService,
    CompressionUsage,
    SummaryRecord,
    compression_due,
    compression_line,
)
from aalis_api_memory.errors import MessageIdConflict
from aalis_api_memory.exact import (
    ArchiveConflict,
    ExactArchiving,
    HistorySnapshot,
    MetadataGuard,
    has_exact_archiving,
)
from aalis_api_memory.forgetting import (
    PERSON_MARK,
    ForgetRequest,
    ForgetResult,
    forget_marked_entries,
    forget_person,
    marked_as,
)
from aalis_api_memory.holds import HeldMemory, Holding
from aalis_api_memory.person import Person, PersonLike, person_of
from aalis_api_memory.prompt import (
    PromptBlock,
    PromptRequest,
    collect_prompt_blocks,
    insert_prompt_blocks,
)
from aalis_api_memory.provider import MemoryProviderPlugin, ServerMemoryProviderPlugin
from aalis_api_memory.saving import SessionClock, announce_saved, save_conversation
from aalis_api_memory.service import (
    OPTIONAL_GROUPS,
    OPTIONAL_METHODS,
    ClearAll,
    CrossSession,
    FullHistory,
    FullMemoryService,
    Leases,
    MemoryService,
    MessagesById,
    MetadataKeys,
    Rewrite,
    Transfer,
    supports,
)
from aalis_api_memory.turn import (
    PromptPlan,
    TurnBusy,
    TurnError,
    TurnModel,
    TurnModelFailed,
    TurnReplyNotSaved,
    TurnResult,
    TurnSettings,
    build_prompt,
    run_turn,
)
from aalis_api_memory.types import (
    Delete,
    MetadataEntry,
    MetadataOp,
    Put,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
    StoredRecord,
)
from aalis_api_memory.undo import UndoError, UndoOutcome, undo_last_turn

if TYPE_CHECKING:
    from aalis_api_memory.sync_host import SyncHost, SyncMemory

#: Imported on first use: the synchronous facade pulls in the whole host.
_LAZY = {"SyncHost": "aalis_api_memory.sync_host", "SyncMemory": "aalis_api_memory.sync_host"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'aalis_api_memory' has no attribute {name!r}")


__all__ = [
    "COMPRESSION_ABSENT",
    "CONTEXT_CLEAR_TYPE",
    "OPTIONAL_GROUPS",
    "OPTIONAL_METHODS",
    "PERSON_MARK",
    "REASON_CODES",
    "ArchiveConflict",
    "BridgeDeadlock",
    "ClearAll",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "CompleteMemoryBackend",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "CrossSession",
    "Delete",
    "ExactArchiving",
    "ForgetRequest",
    "ForgetResult",
    "FullHistory",
    "FullMemoryService",
    "HeldMemory",
    "HistorySnapshot",
    "Holding",
    "Leases",
    "LoopBridge",
    "MemoryBackend",
    "MemoryProviderPlugin",
    "MemoryService",
    "MessageIdConflict",
    "MessagesById",
    "MetadataEntry",
    "MetadataGuard",
    "MetadataKeys",
    "MetadataOp",
    "Person",
    "PersonLike",
    "PromptBlock",
    "PromptPlan",
    "PromptRequest",
    "Put",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "Rewrite",
    "ServerMemoryProviderPlugin",
    "SessionClock",
    "SessionInfo",
    "StoredMessage",
    "StoredRecord",
    "SummaryRecord",
    "SyncHost",
    "SyncMemory",
    "TextRef",
    "Transfer",
    "TurnBusy",
    "TurnError",
    "TurnModel",
    "TurnModelFailed",
    "TurnReplyNotSaved",
    "TurnResult",
    "TurnSettings",
    "UndoError",
    "UndoOutcome",
    "UnknownClearType",
    "announce_saved",
    "build_prompt",
    "clear_metadata_namespaces",
    "clear_types",
    "collect_prompt_blocks",
    "compression",
    "compression_due",
    "compression_line",
    "forget_marked_entries",
    "forget_person",
    "has_exact_archiving",
    "history_cleared",
    "insert_prompt_blocks",
    "marked_as",
    "memory",
    "person_of",
    "resolve_types",
    "run_clear",
    "run_turn",
    "save_conversation",
    "supports",
    "undo_last_turn",
]
