"""The Aalis memory contract. Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_memory._backend import (
        OPTIONAL_MIXINS as OPTIONAL_MIXINS,
    )
    from aalis_api_memory._backend import (
        UNBOUNDED as UNBOUNDED,
    )
    from aalis_api_memory._backend import (
        CompleteMemoryBackend as CompleteMemoryBackend,
    )
    from aalis_api_memory._backend import (
        EncodedOp as EncodedOp,
    )
    from aalis_api_memory._backend import (
        ExactCommit as ExactCommit,
    )
    from aalis_api_memory._backend import (
        ImportRecord as ImportRecord,
    )
    from aalis_api_memory._backend import (
        MemoryBackend as MemoryBackend,
    )
    from aalis_api_memory._backend import (
        RangeQuery as RangeQuery,
    )
    from aalis_api_memory._backend import (
        RecentQuery as RecentQuery,
    )
    from aalis_api_memory._backend import (
        Stamped as Stamped,
    )
    from aalis_api_memory._backend import (
        WithClearAll as WithClearAll,
    )
    from aalis_api_memory._backend import (
        WithCrossSession as WithCrossSession,
    )
    from aalis_api_memory._backend import (
        WithExactArchiving as WithExactArchiving,
    )
    from aalis_api_memory._backend import (
        WithFullHistory as WithFullHistory,
    )
    from aalis_api_memory._backend import (
        WithLeases as WithLeases,
    )
    from aalis_api_memory._backend import (
        WithMessagesById as WithMessagesById,
    )
    from aalis_api_memory._backend import (
        WithMetadataKeys as WithMetadataKeys,
    )
    from aalis_api_memory._backend import (
        WithRewrite as WithRewrite,
    )
    from aalis_api_memory._backend import (
        WithTransfer as WithTransfer,
    )
    from aalis_api_memory._backend import (
        check_records as check_records,
    )
    from aalis_api_memory._backend import (
        identified as identified,
    )
    from aalis_api_memory._capabilities import (
        COMPRESSION_ABSENT as COMPRESSION_ABSENT,
    )
    from aalis_api_memory._capabilities import (
        compression as compression,
    )
    from aalis_api_memory._capabilities import (
        memory as memory,
    )
    from aalis_api_memory._checked import (
        bounded as bounded,
    )
    from aalis_api_memory._checked import (
        clamp as clamp,
    )
    from aalis_api_memory._checked import (
        distinct as distinct,
    )
    from aalis_api_memory._checked import (
        stamp as stamp,
    )
    from aalis_api_memory._clearing import (
        ALIASES as ALIASES,
    )
    from aalis_api_memory._clearing import (
        ALL_TYPES as ALL_TYPES,
    )
    from aalis_api_memory._clearing import (
        CONTEXT as CONTEXT,
    )
    from aalis_api_memory._clearing import (
        CONTEXT_CLEAR_TYPE as CONTEXT_CLEAR_TYPE,
    )
    from aalis_api_memory._clearing import (
        SCOPES as SCOPES,
    )
    from aalis_api_memory._clearing import (
        ClearRequest as ClearRequest,
    )
    from aalis_api_memory._clearing import (
        ClearResult as ClearResult,
    )
    from aalis_api_memory._clearing import (
        ClearType as ClearType,
    )
    from aalis_api_memory._clearing import (
        Scope as Scope,
    )
    from aalis_api_memory._clearing import (
        Text as Text,
    )
    from aalis_api_memory._clearing import (
        TextRef as TextRef,
    )
    from aalis_api_memory._clearing import (
        UnknownClearType as UnknownClearType,
    )
    from aalis_api_memory._clearing import (
        clear_metadata_namespaces as clear_metadata_namespaces,
    )
    from aalis_api_memory._clearing import (
        history_cleared as history_cleared,
    )
    from aalis_api_memory._clearing import (
        resolve_types as resolve_types,
    )
    from aalis_api_memory._compression import (
        REASON_CODES as REASON_CODES,
    )
    from aalis_api_memory._compression import (
        CompressionError as CompressionError,
    )
    from aalis_api_memory._compression import (
        CompressionLines as CompressionLines,
    )
    from aalis_api_memory._compression import (
        CompressionService as CompressionService,
    )
    from aalis_api_memory._compression import (
        CompressionUsage as CompressionUsage,
    )
    from aalis_api_memory._compression import (
        ReasonCode as ReasonCode,
    )
    from aalis_api_memory._compression import (
        SummaryRecord as SummaryRecord,
    )
    from aalis_api_memory._compression import (
        compression_due as compression_due,
    )
    from aalis_api_memory._compression import (
        compression_line as compression_line,
    )
    from aalis_api_memory._errors import (
        AalisMemoryError as AalisMemoryError,
    )
    from aalis_api_memory._errors import (
        BackendError as BackendError,
    )
    from aalis_api_memory._errors import (
        BackendUnavailable as BackendUnavailable,
    )
    from aalis_api_memory._errors import (
        MessageIdConflict as MessageIdConflict,
    )
    from aalis_api_memory._errors import (
        SchemaTooNew as SchemaTooNew,
    )
    from aalis_api_memory._errors import (
        StoreClosed as StoreClosed,
    )
    from aalis_api_memory._errors import (
        StoredDataError as StoredDataError,
    )
    from aalis_api_memory._exact import (
        EXACT_METHODS as EXACT_METHODS,
    )
    from aalis_api_memory._exact import (
        ArchiveConflict as ArchiveConflict,
    )
    from aalis_api_memory._exact import (
        CheckedGuard as CheckedGuard,
    )
    from aalis_api_memory._exact import (
        ConflictReason as ConflictReason,
    )
    from aalis_api_memory._exact import (
        ExactArchiving as ExactArchiving,
    )
    from aalis_api_memory._exact import (
        HistorySnapshot as HistorySnapshot,
    )
    from aalis_api_memory._exact import (
        MetadataGuard as MetadataGuard,
    )
    from aalis_api_memory._exact import (
        check_guard as check_guard,
    )
    from aalis_api_memory._exact import (
        check_ids as check_ids,
    )
    from aalis_api_memory._exact import (
        check_marker as check_marker,
    )
    from aalis_api_memory._exact import (
        has_exact_archiving as has_exact_archiving,
    )
    from aalis_api_memory._exact import (
        same_entry as same_entry,
    )
    from aalis_api_memory._forgetting import (
        PERSON_MARK as PERSON_MARK,
    )
    from aalis_api_memory._forgetting import (
        ForgetRequest as ForgetRequest,
    )
    from aalis_api_memory._forgetting import (
        ForgetResult as ForgetResult,
    )
    from aalis_api_memory._forgetting import (
        forget_marked_entries as forget_marked_entries,
    )
    from aalis_api_memory._forgetting import (
        marked_as as marked_as,
    )
    from aalis_api_memory._forgetting import (
        speaker as speaker,
    )
    from aalis_api_memory._holds import (
        HELD_WRITES as HELD_WRITES,
    )
    from aalis_api_memory._holds import (
        HeldMemory as HeldMemory,
    )
    from aalis_api_memory._holds import (
        Holding as Holding,
    )
    from aalis_api_memory._hookspecs import (
        EVENTS as EVENTS,
    )
    from aalis_api_memory._hookspecs import (
        CompressingStatus as CompressingStatus,
    )
    from aalis_api_memory._hookspecs import (
        history_changed as history_changed,
    )
    from aalis_api_memory._hookspecs import (
        memory_clear as memory_clear,
    )
    from aalis_api_memory._hookspecs import (
        memory_clear_types as memory_clear_types,
    )
    from aalis_api_memory._hookspecs import (
        memory_forget as memory_forget,
    )
    from aalis_api_memory._hookspecs import (
        memory_messages_deleted as memory_messages_deleted,
    )
    from aalis_api_memory._hookspecs import (
        memory_messages_rewritten as memory_messages_rewritten,
    )
    from aalis_api_memory._hookspecs import (
        memory_messages_saved as memory_messages_saved,
    )
    from aalis_api_memory._hookspecs import (
        session_compressing as session_compressing,
    )
    from aalis_api_memory._leases import (
        MAX_LEASE_KEY as MAX_LEASE_KEY,
    )
    from aalis_api_memory._leases import (
        MAX_TTL_MS as MAX_TTL_MS,
    )
    from aalis_api_memory._leases import (
        LeaseFailed as LeaseFailed,
    )
    from aalis_api_memory._leases import (
        Leases as Leases,
    )
    from aalis_api_memory._leases import (
        LeaseWaitTimeout as LeaseWaitTimeout,
    )
    from aalis_api_memory._leases import (
        check_lease_key as check_lease_key,
    )
    from aalis_api_memory._leases import (
        check_ttl_ms as check_ttl_ms,
    )
    from aalis_api_memory._leases import (
        new_holder as new_holder,
    )
    from aalis_api_memory._leases import (
        turn_lease_name as turn_lease_name,
    )
    from aalis_api_memory._person import (
        PLATFORM_KEY as PLATFORM_KEY,
    )
    from aalis_api_memory._person import (
        USER_ID_KEY as USER_ID_KEY,
    )
    from aalis_api_memory._person import (
        Person as Person,
    )
    from aalis_api_memory._person import (
        PersonLike as PersonLike,
    )
    from aalis_api_memory._person import (
        person_of as person_of,
    )
    from aalis_api_memory._provider import (
        MemoryProviderPlugin as MemoryProviderPlugin,
    )
    from aalis_api_memory._provider import (
        ServerConfig as ServerConfig,
    )
    from aalis_api_memory._provider import (
        ServerMemoryProviderPlugin as ServerMemoryProviderPlugin,
    )
    from aalis_api_memory._service import (
        OPTIONAL_GROUPS as OPTIONAL_GROUPS,
    )
    from aalis_api_memory._service import (
        OPTIONAL_METHODS as OPTIONAL_METHODS,
    )
    from aalis_api_memory._service import (
        ClearAll as ClearAll,
    )
    from aalis_api_memory._service import (
        CrossSession as CrossSession,
    )
    from aalis_api_memory._service import (
        FullHistory as FullHistory,
    )
    from aalis_api_memory._service import (
        FullMemoryService as FullMemoryService,
    )
    from aalis_api_memory._service import (
        Limit as Limit,
    )
    from aalis_api_memory._service import (
        MemoryService as MemoryService,
    )
    from aalis_api_memory._service import (
        MessagesById as MessagesById,
    )
    from aalis_api_memory._service import (
        MetadataKeys as MetadataKeys,
    )
    from aalis_api_memory._service import (
        Rewrite as Rewrite,
    )
    from aalis_api_memory._service import (
        Transfer as Transfer,
    )
    from aalis_api_memory._service import (
        group_methods as group_methods,
    )
    from aalis_api_memory._service import (
        group_of as group_of,
    )
    from aalis_api_memory._service import (
        missing_methods as missing_methods,
    )
    from aalis_api_memory._service import (
        supports as supports,
    )
    from aalis_api_memory._types import (
        Delete as Delete,
    )
    from aalis_api_memory._types import (
        MetadataEntry as MetadataEntry,
    )
    from aalis_api_memory._types import (
        MetadataOp as MetadataOp,
    )
    from aalis_api_memory._types import (
        Put as Put,
    )
    from aalis_api_memory._types import (
        RecentMessageRecord as RecentMessageRecord,
    )
    from aalis_api_memory._types import (
        RecentMessagesQuery as RecentMessagesQuery,
    )
    from aalis_api_memory._types import (
        SessionInfo as SessionInfo,
    )
    from aalis_api_memory._types import (
        StoredMessage as StoredMessage,
    )
    from aalis_api_memory._types import (
        StoredRecord as StoredRecord,
    )
    from aalis_api_memory._validation import (
        DEFAULT_CROSS_SESSION_MAX_LIMIT as DEFAULT_CROSS_SESSION_MAX_LIMIT,
    )
    from aalis_api_memory._validation import (
        DEFAULT_FULL_HISTORY_LIMIT as DEFAULT_FULL_HISTORY_LIMIT,
    )
    from aalis_api_memory._validation import (
        DEFAULT_HISTORY_LIMIT as DEFAULT_HISTORY_LIMIT,
    )
    from aalis_api_memory._validation import (
        DEFAULT_RANGE_QUERY_LIMIT as DEFAULT_RANGE_QUERY_LIMIT,
    )
    from aalis_api_memory._validation import (
        DEFAULT_RECENT_LIMIT as DEFAULT_RECENT_LIMIT,
    )
    from aalis_api_memory._validation import (
        INT64_MAX as INT64_MAX,
    )
    from aalis_api_memory._validation import (
        INT64_MIN as INT64_MIN,
    )
    from aalis_api_memory._validation import (
        MAX_IDS_PER_CALL as MAX_IDS_PER_CALL,
    )
    from aalis_api_memory._validation import (
        check_count as check_count,
    )
    from aalis_api_memory._validation import (
        check_keep as check_keep,
    )
    from aalis_api_memory._validation import (
        check_key as check_key,
    )
    from aalis_api_memory._validation import (
        check_limit as check_limit,
    )
    from aalis_api_memory._validation import (
        check_message as check_message,
    )
    from aalis_api_memory._validation import (
        check_message_ids as check_message_ids,
    )
    from aalis_api_memory._validation import (
        check_namespace as check_namespace,
    )
    from aalis_api_memory._validation import (
        check_recent_query as check_recent_query,
    )
    from aalis_api_memory._validation import (
        check_replacement as check_replacement,
    )
    from aalis_api_memory._validation import (
        check_session_id as check_session_id,
    )
    from aalis_api_memory._validation import (
        check_stored_timestamp as check_stored_timestamp,
    )
    from aalis_api_memory._validation import (
        check_str_filter as check_str_filter,
    )
    from aalis_api_memory._validation import (
        check_text as check_text,
    )
    from aalis_api_memory._validation import (
        check_timestamp as check_timestamp,
    )
    from aalis_api_memory._validation import (
        check_timestamps as check_timestamps,
    )
    from aalis_api_memory._validation import (
        decode_metadata as decode_metadata,
    )
    from aalis_api_memory._validation import (
        encode_batch as encode_batch,
    )
    from aalis_api_memory._validation import (
        encode_metadata as encode_metadata,
    )
    from aalis_api_memory._validation import (
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
