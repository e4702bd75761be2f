"""The Aalis fact contract (docs/host/facts.md). Everything public is re-exported here."""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_api_relation._capabilities import (
        relation as relation,
    )
    from aalis_api_relation._consolidation import (
        OPPOSITES as OPPOSITES,
        Removal as Removal,
        Statement as Statement,
        consolidate as consolidate,
        drop_sources as drop_sources,
        norm as norm,
        retract as retract,
    )
    from aalis_api_relation._errors import (
        FactNotFound as FactNotFound,
        RelationError as RelationError,
        RelationUnavailable as RelationUnavailable,
    )
    from aalis_api_relation._inmemory import (
        InMemoryRelation as InMemoryRelation,
    )
    from aalis_api_relation._ranking import (
        HINTS as HINTS,
        rank as rank,
        score as score,
    )
    from aalis_api_relation._service import (
        RelationService as RelationService,
    )
    from aalis_api_relation._types import (
        ATTRIBUTES as ATTRIBUTES,
        MULTI_VALUED as MULTI_VALUED,
        SINGLE_VALUED as SINGLE_VALUED,
        Fact as Fact,
        PersonRef as PersonRef,
        is_single_valued as is_single_valued,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_api_relation._capabilities": "relation",
    "aalis_api_relation._consolidation": "OPPOSITES Removal Statement consolidate drop_sources norm retract",
    "aalis_api_relation._errors": "FactNotFound RelationError RelationUnavailable",
    "aalis_api_relation._inmemory": "InMemoryRelation",
    "aalis_api_relation._ranking": "HINTS rank score",
    "aalis_api_relation._service": "RelationService",
    "aalis_api_relation._types": "ATTRIBUTES Fact MULTI_VALUED PersonRef SINGLE_VALUED is_single_valued",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "ATTRIBUTES",
    "HINTS",
    "MULTI_VALUED",
    "OPPOSITES",
    "SINGLE_VALUED",
    "Fact",
    "FactNotFound",
    "InMemoryRelation",
    "PersonRef",
    "RelationError",
    "RelationService",
    "RelationUnavailable",
    "Removal",
    "Statement",
    "consolidate",
    "drop_sources",
    "is_single_valued",
    "norm",
    "rank",
    "relation",
    "retract",
    "score",
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
