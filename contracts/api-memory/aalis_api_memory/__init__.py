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
from aalis_api_memory.holds import HeldMemory
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

__all__ = [
    "CONTEXT_CLEAR_TYPE",
    "OPTIONAL_METHODS",
    "REASON_CODES",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "Delete",
    "HeldMemory",
    "MemoryService",
    "MetadataEntry",
    "MetadataOp",
    "Put",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "SessionInfo",
    "StoredMessage",
    "SummaryRecord",
    "TextRef",
    "UnknownClearType",
    "clear_metadata_namespaces",
    "clear_types",
    "compression",
    "compression_due",
    "compression_line",
    "history_cleared",
    "memory",
    "resolve_types",
    "run_clear",
]
