"""The Aalis vectorstore and recall contracts. Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_vectorstore._capabilities import (
        recall as recall,
        vectorstore as vectorstore,
    )
    from aalis_api_vectorstore._errors import (
        DimensionMismatch as DimensionMismatch,
        VectorStoreError as VectorStoreError,
        VectorStoreUnavailable as VectorStoreUnavailable,
    )
    from aalis_api_vectorstore._inmemory import (
        InMemoryVectorStore as InMemoryVectorStore,
    )
    from aalis_api_vectorstore._lexical import (
        LexicalTerms as LexicalTerms,
        lexical_terms as lexical_terms,
    )
    from aalis_api_vectorstore._recall import (
        Recall as Recall,
        RecallHit as RecallHit,
        RecallUnavailable as RecallUnavailable,
    )
    from aalis_api_vectorstore._store import (
        DroppedSessions as DroppedSessions,
        LexicalIndexCheck as LexicalIndexCheck,
        LexicalSearch as LexicalSearch,
        VectorStore as VectorStore,
    )
    from aalis_api_vectorstore._types import (
        LexicalDrift as LexicalDrift,
        ModelStats as ModelStats,
        ScopeFilter as ScopeFilter,
        VectorEntry as VectorEntry,
        VectorHit as VectorHit,
        VectorKey as VectorKey,
        VectorRecord as VectorRecord,
        VectorStoreStats as VectorStoreStats,
    )
    from aalis_api_vectorstore._validation import (
        batch_dims as batch_dims,
        check_delete as check_delete,
        check_dims as check_dims,
        check_ids as check_ids,
        check_k as check_k,
        check_records as check_records,
        check_session_id as check_session_id,
        check_timestamps as check_timestamps,
        check_where as check_where,
        float_row as float_row,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_api_vectorstore._capabilities": "recall vectorstore",
    "aalis_api_vectorstore._errors": "DimensionMismatch VectorStoreError VectorStoreUnavailable",
    "aalis_api_vectorstore._inmemory": "InMemoryVectorStore",
    "aalis_api_vectorstore._lexical": "LexicalTerms lexical_terms",
    "aalis_api_vectorstore._recall": "Recall RecallHit RecallUnavailable",
    "aalis_api_vectorstore._store": "DroppedSessions LexicalIndexCheck LexicalSearch VectorStore",
    "aalis_api_vectorstore._types": (
        "LexicalDrift ModelStats ScopeFilter VectorEntry VectorHit VectorKey VectorRecord "
        "VectorStoreStats"
    ),
    "aalis_api_vectorstore._validation": (
        "batch_dims check_delete check_dims check_ids check_k check_records "
        "check_session_id check_timestamps check_where float_row"
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "DimensionMismatch",
    "DroppedSessions",
    "InMemoryVectorStore",
    "LexicalDrift",
    "LexicalIndexCheck",
    "LexicalSearch",
    "LexicalTerms",
    "ModelStats",
    "Recall",
    "RecallHit",
    "RecallUnavailable",
    "ScopeFilter",
    "VectorEntry",
    "VectorHit",
    "VectorKey",
    "VectorRecord",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreStats",
    "VectorStoreUnavailable",
    "batch_dims",
    "check_delete",
    "check_dims",
    "check_ids",
    "check_k",
    "check_records",
    "check_session_id",
    "check_timestamps",
    "check_where",
    "float_row",
    "lexical_terms",
    "recall",
    "vectorstore",
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
