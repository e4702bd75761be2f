"""The Aalis memory contract. Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_memory._backend import (
        OPTIONAL_MIXINS as OPTIONAL_MIXINS,
        UNBOUNDED as UNBOUNDED,
        CompleteMemoryBackend as CompleteMemoryBackend,
        EncodedOp as EncodedOp,
        ExactCommit as ExactCommit,
        ImportRecord as ImportRecord,
        MemoryBackend as MemoryBackend,
        RangeQuery as RangeQuery,
        RecentQuery as RecentQuery,
        Stamped as Stamped,
        WithClearAll as WithClearAll,
        WithCrossSession as WithCrossSession,
        WithExactArchiving as WithExactArchiving,
        WithFullHistory as WithFullHistory,
        WithLeases as WithLeases,
        WithMessagesById as WithMessagesById,
        WithMetadataKeys as WithMetadataKeys,
        WithRewrite as WithRewrite,
        WithTransfer as WithTransfer,
        check_records as check_records,
        identified as identified,
    )
    from aalis_api_memory._capabilities import (
        COMPRESSION_ABSENT as COMPRESSION_ABSENT,
        compression as compression,
        memory as memory,
    )
    from aalis_api_memory._checked import (
        bounded as bounded,
        clamp as clamp,
        distinct as distinct,
        stamp as stamp,
    )
    from aalis_api_memory._clearing import (
        ALIASES as ALIASES,
        ALL_TYPES as ALL_TYPES,
        CONTEXT as CONTEXT,
        CONTEXT_CLEAR_TYPE as CONTEXT_CLEAR_TYPE,
        SCOPES as SCOPES,
        ClearRequest as ClearRequest,
        ClearResult as ClearResult,
        ClearType as ClearType,
        Scope as Scope,
        Text as Text,
        TextRef as TextRef,
        UnknownClearType as UnknownClearType,
        clear_metadata_namespaces as clear_metadata_namespaces,
        history_cleared as history_cleared,
        resolve_types as resolve_types,
    )
    from aalis_api_memory._compression import (
        REASON_CODES as REASON_CODES,
        CompressionError as CompressionError,
        CompressionLines as CompressionLines,
        CompressionService as CompressionService,
        CompressionUsage as CompressionUsage,
        ReasonCode as ReasonCode,
        SummaryRecord as SummaryRecord,
        compression_due as compression_due,
        compression_line as compression_line,
    )
    from aalis_api_memory._errors import (
        AalisMemoryError as AalisMemoryError,
        BackendError as BackendError,
        BackendUnavailable as BackendUnavailable,
        MessageIdConflict as MessageIdConflict,
        SchemaTooNew as SchemaTooNew,
        StoreClosed as StoreClosed,
        StoredDataError as StoredDataError,
    )
    from aalis_api_memory._exact import (
        EXACT_METHODS as EXACT_METHODS,
        ArchiveConflict as ArchiveConflict,
        CheckedGuard as CheckedGuard,
        ConflictReason as ConflictReason,
        ExactArchiving as ExactArchiving,
        HistorySnapshot as HistorySnapshot,
        MetadataGuard as MetadataGuard,
        check_guard as check_guard,
        check_ids as check_ids,
        check_marker as check_marker,
        has_exact_archiving as has_exact_archiving,
        same_entry as same_entry,
    )
    from aalis_api_memory._forgetting import (
        PERSON_MARK as PERSON_MARK,
        ForgetRequest as ForgetRequest,
        ForgetResult as ForgetResult,
        forget_marked_entries as forget_marked_entries,
        marked_as as marked_as,
        speaker as speaker,
    )
    from aalis_api_memory._holds import (
        HELD_WRITES as HELD_WRITES,
        HeldMemory as HeldMemory,
        Holding as Holding,
    )
    from aalis_api_memory._hookspecs import (
        EVENTS as EVENTS,
        CompressingStatus as CompressingStatus,
        history_changed as history_changed,
        memory_clear as memory_clear,
        memory_clear_types as memory_clear_types,
        memory_forget as memory_forget,
        memory_messages_deleted as memory_messages_deleted,
        memory_messages_rewritten as memory_messages_rewritten,
        memory_messages_saved as memory_messages_saved,
        session_compressing as session_compressing,
    )
    from aalis_api_memory._leases import (
        MAX_LEASE_KEY as MAX_LEASE_KEY,
        MAX_TTL_MS as MAX_TTL_MS,
        LeaseFailed as LeaseFailed,
        Leases as Leases,
        LeaseWaitTimeout as LeaseWaitTimeout,
        check_lease_key as check_lease_key,
        check_ttl_ms as check_ttl_ms,
        new_holder as new_holder,
        turn_lease_name as turn_lease_name,
    )
    from aalis_api_memory._person import (
        PLATFORM_KEY as PLATFORM_KEY,
        USER_ID_KEY as USER_ID_KEY,
        Person as Person,
        PersonLike as PersonLike,
        person_of as person_of,
    )
    from aalis_api_memory._provider import (
        MemoryProviderPlugin as MemoryProviderPlugin,
        ServerConfig as ServerConfig,
        ServerMemoryProviderPlugin as ServerMemoryProviderPlugin,
    )
    from aalis_api_memory._service import (
        OPTIONAL_GROUPS as OPTIONAL_GROUPS,
        OPTIONAL_METHODS as OPTIONAL_METHODS,
        ClearAll as ClearAll,
        CrossSession as CrossSession,
        FullHistory as FullHistory,
        FullMemoryService as FullMemoryService,
        Limit as Limit,
        MemoryService as MemoryService,
        MessagesById as MessagesById,
        MetadataKeys as MetadataKeys,
        Rewrite as Rewrite,
        Transfer as Transfer,
        group_methods as group_methods,
        group_of as group_of,
        missing_methods as missing_methods,
        supports as supports,
    )
    from aalis_api_memory._types import (
        Delete as Delete,
        MetadataEntry as MetadataEntry,
        MetadataOp as MetadataOp,
        Put as Put,
        RecentMessageRecord as RecentMessageRecord,
        RecentMessagesQuery as RecentMessagesQuery,
        SessionInfo as SessionInfo,
        StoredMessage as StoredMessage,
        StoredRecord as StoredRecord,
    )
    from aalis_api_memory._validation import (
        DEFAULT_CROSS_SESSION_MAX_LIMIT as DEFAULT_CROSS_SESSION_MAX_LIMIT,
        DEFAULT_FULL_HISTORY_LIMIT as DEFAULT_FULL_HISTORY_LIMIT,
        DEFAULT_HISTORY_LIMIT as DEFAULT_HISTORY_LIMIT,
        DEFAULT_RANGE_QUERY_LIMIT as DEFAULT_RANGE_QUERY_LIMIT,
        DEFAULT_RECENT_LIMIT as DEFAULT_RECENT_LIMIT,
        INT64_MAX as INT64_MAX,
        INT64_MIN as INT64_MIN,
        MAX_IDS_PER_CALL as MAX_IDS_PER_CALL,
        check_count as check_count,
        check_keep as check_keep,
        check_key as check_key,
        check_limit as check_limit,
        check_message as check_message,
        check_message_ids as check_message_ids,
        check_namespace as check_namespace,
        check_recent_query as check_recent_query,
        check_replacement as check_replacement,
        check_session_id as check_session_id,
        check_stored_timestamp as check_stored_timestamp,
        check_str_filter as check_str_filter,
        check_text as check_text,
        check_timestamp as check_timestamp,
        check_timestamps as check_timestamps,
        decode_metadata as decode_metadata,
        encode_batch as encode_batch,
        encode_metadata as encode_metadata,
        take_last as take_last,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_api_memory._backend": (
        "CompleteMemoryBackend EncodedOp ExactCommit ImportRecord MemoryBackend "
        "OPTIONAL_MIXINS RangeQuery RecentQuery Stamped UNBOUNDED WithClearAll "
        "WithCrossSession WithExactArchiving WithFullHistory WithLeases "
        "WithMessagesById WithMetadataKeys WithRewrite WithTransfer "
        "check_records identified"
    ),
    "aalis_api_memory._capabilities": "COMPRESSION_ABSENT compression memory",
    "aalis_api_memory._checked": "bounded clamp distinct stamp",
    "aalis_api_memory._clearing": (
        "ALIASES ALL_TYPES CONTEXT CONTEXT_CLEAR_TYPE ClearRequest ClearResult "
        "ClearType SCOPES Scope Text TextRef UnknownClearType "
        "clear_metadata_namespaces history_cleared resolve_types"
    ),
    "aalis_api_memory._compression": (
        "CompressionError CompressionLines CompressionService CompressionUsage "
        "REASON_CODES ReasonCode SummaryRecord compression_due compression_line"
    ),
    "aalis_api_memory._errors": (
        "AalisMemoryError BackendError BackendUnavailable MessageIdConflict "
        "SchemaTooNew StoreClosed StoredDataError"
    ),
    "aalis_api_memory._exact": (
        "ArchiveConflict CheckedGuard ConflictReason EXACT_METHODS "
        "ExactArchiving HistorySnapshot MetadataGuard check_guard check_ids "
        "check_marker has_exact_archiving same_entry"
    ),
    "aalis_api_memory._forgetting": (
        "ForgetRequest ForgetResult PERSON_MARK forget_marked_entries marked_as speaker"
    ),
    "aalis_api_memory._holds": "HELD_WRITES HeldMemory Holding",
    "aalis_api_memory._hookspecs": (
        "CompressingStatus EVENTS history_changed memory_clear "
        "memory_clear_types memory_forget memory_messages_deleted "
        "memory_messages_rewritten memory_messages_saved session_compressing"
    ),
    "aalis_api_memory._leases": (
        "LeaseFailed LeaseWaitTimeout Leases MAX_LEASE_KEY MAX_TTL_MS "
        "check_lease_key check_ttl_ms new_holder turn_lease_name"
    ),
    "aalis_api_memory._person": "PLATFORM_KEY Person PersonLike USER_ID_KEY person_of",
    "aalis_api_memory._provider": "MemoryProviderPlugin ServerConfig ServerMemoryProviderPlugin",
    "aalis_api_memory._service": (
        "ClearAll CrossSession FullHistory FullMemoryService Limit "
        "MemoryService MessagesById MetadataKeys OPTIONAL_GROUPS "
        "OPTIONAL_METHODS Rewrite Transfer group_methods group_of "
        "missing_methods supports"
    ),
    "aalis_api_memory._types": (
        "Delete MetadataEntry MetadataOp Put RecentMessageRecord "
        "RecentMessagesQuery SessionInfo StoredMessage StoredRecord"
    ),
    "aalis_api_memory._validation": (
        "DEFAULT_CROSS_SESSION_MAX_LIMIT DEFAULT_FULL_HISTORY_LIMIT "
        "DEFAULT_HISTORY_LIMIT DEFAULT_RANGE_QUERY_LIMIT DEFAULT_RECENT_LIMIT "
        "INT64_MAX INT64_MIN MAX_IDS_PER_CALL check_count check_keep check_key "
        "check_limit check_message check_message_ids check_namespace "
        "check_recent_query check_replacement check_session_id "
        "check_stored_timestamp check_str_filter check_text check_timestamp "
        "check_timestamps decode_metadata encode_batch encode_metadata "
        "take_last"
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "ALIASES",
    "ALL_TYPES",
    "COMPRESSION_ABSENT",
    "CONTEXT",
    "CONTEXT_CLEAR_TYPE",
    "DEFAULT_CROSS_SESSION_MAX_LIMIT",
    "DEFAULT_FULL_HISTORY_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "DEFAULT_RANGE_QUERY_LIMIT",
    "DEFAULT_RECENT_LIMIT",
    "EVENTS",
    "EXACT_METHODS",
    "HELD_WRITES",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_IDS_PER_CALL",
    "MAX_LEASE_KEY",
    "MAX_TTL_MS",
    "OPTIONAL_GROUPS",
    "OPTIONAL_METHODS",
    "OPTIONAL_MIXINS",
    "PERSON_MARK",
    "PLATFORM_KEY",
    "REASON_CODES",
    "SCOPES",
    "UNBOUNDED",
    "USER_ID_KEY",
    "AalisMemoryError",
    "ArchiveConflict",
    "BackendError",
    "BackendUnavailable",
    "CheckedGuard",
    "ClearAll",
    "ClearRequest",
    "ClearResult",
    "ClearType",
    "CompleteMemoryBackend",
    "CompressingStatus",
    "CompressionError",
    "CompressionLines",
    "CompressionService",
    "CompressionUsage",
    "ConflictReason",
    "CrossSession",
    "Delete",
    "EncodedOp",
    "ExactArchiving",
    "ExactCommit",
    "ForgetRequest",
    "ForgetResult",
    "FullHistory",
    "FullMemoryService",
    "HeldMemory",
    "HistorySnapshot",
    "Holding",
    "ImportRecord",
    "LeaseFailed",
    "LeaseWaitTimeout",
    "Leases",
    "Limit",
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
    "Put",
    "RangeQuery",
    "ReasonCode",
    "RecentMessageRecord",
    "RecentMessagesQuery",
    "RecentQuery",
    "Rewrite",
    "SchemaTooNew",
    "Scope",
    "ServerConfig",
    "ServerMemoryProviderPlugin",
    "SessionInfo",
    "Stamped",
    "StoreClosed",
    "StoredDataError",
    "StoredMessage",
    "StoredRecord",
    "SummaryRecord",
    "Text",
    "TextRef",
    "Transfer",
    "UnknownClearType",
    "WithClearAll",
    "WithCrossSession",
    "WithExactArchiving",
    "WithFullHistory",
    "WithLeases",
    "WithMessagesById",
    "WithMetadataKeys",
    "WithRewrite",
    "WithTransfer",
    "bounded",
    "check_count",
    "check_guard",
    "check_ids",
    "check_keep",
    "check_key",
    "check_lease_key",
    "check_limit",
    "check_marker",
    "check_message",
    "check_message_ids",
    "check_namespace",
    "check_recent_query",
    "check_records",
    "check_replacement",
    "check_session_id",
    "check_stored_timestamp",
    "check_str_filter",
    "check_text",
    "check_timestamp",
    "check_timestamps",
    "check_ttl_ms",
    "clamp",
    "clear_metadata_namespaces",
    "compression",
    "compression_due",
    "compression_line",
    "decode_metadata",
    "distinct",
    "encode_batch",
    "encode_metadata",
    "forget_marked_entries",
    "group_methods",
    "group_of",
    "has_exact_archiving",
    "history_changed",
    "history_cleared",
    "identified",
    "marked_as",
    "memory",
    "memory_clear",
    "memory_clear_types",
    "memory_forget",
    "memory_messages_deleted",
    "memory_messages_rewritten",
    "memory_messages_saved",
    "missing_methods",
    "new_holder",
    "person_of",
    "resolve_types",
    "same_entry",
    "session_compressing",
    "speaker",
    "stamp",
    "supports",
    "take_last",
    "turn_lease_name",
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
