"""The Aalis memory contract. Everything public is re-exported here."""

from aalis_api_memory.capabilities import compression, memory
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
from aalis_api_memory.exact import (
    ArchiveConflict,
    ExactArchiving,
    HistorySnapshot,
    MetadataGuard,
    has_exact_archiving,
)
from aalis_api_memory.holds import HeldMemory
from aalis_api_memory.prompt import (
    PromptBlock,
    PromptRequest,
    collect_prompt_blocks,
    insert_prompt_blocks,
)
from aalis_api_memory.service import OPTIONAL_METHODS, MemoryService
from aalis_api_memory.types import (
    Delete,
    MetadataEntry,
    MetadataOp,
    Put,
    RecentMessageRecord,
    RecentMessagesQuery,
    SessionInfo,
    StoredMessage,
)
from aalis_api_memory.undo import UndoError, UndoOutcome, undo_last_turn

__all__ = [
    "CONTEXT_CLEAR_TYPE",
    "OPTIONAL_METHODS",
    "REASON_CODES",
    "ArchiveConflict",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "Delete",
    "ExactArchiving",
    "HeldMemory",
    "HistorySnapshot",
    "MemoryService",
    "MetadataEntry",
    "MetadataGuard",
    "MetadataOp",
    "PromptBlock",
    "PromptRequest",
    "Put",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "SessionInfo",
    "StoredMessage",
    "SummaryRecord",
    "TextRef",
    "UndoError",
    "UndoOutcome",
    "UnknownClearType",
    "clear_metadata_namespaces",
    "clear_types",
    "collect_prompt_blocks",
    "compression",
    "compression_due",
    "compression_line",
    "has_exact_archiving",
    "history_cleared",
    "insert_prompt_blocks",
    "memory",
    "resolve_types",
    "run_clear",
    "undo_last_turn",
]
