"""The Aalis memory contract. Everything public is re-exported here."""

from aalis_api_memory.capabilities import compression, memory
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

# Clearing (run_clear, ClearRequest, ...) is re-exported here once aalis_api_memory.clearing exists.

__all__ = [
    "OPTIONAL_METHODS",
    "REASON_CODES",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "Delete",
    "MemoryService",
    "MetadataEntry",
    "MetadataOp",
    "Put",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "SessionInfo",
    "StoredMessage",
    "SummaryRecord",
    "compression",
    "compression_due",
    "compression_line",
    "memory",
]
