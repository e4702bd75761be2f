"""The Aalis fact contract (docs/host/facts.md). Everything public is re-exported here."""

from aalis_api_relation.capabilities import relation
from aalis_api_relation.consolidation import (
    OPPOSITES,
    Removal,
    Statement,
    consolidate,
    drop_sources,
    norm,
    retract,
)
from aalis_api_relation.errors import FactNotFound, RelationError, RelationUnavailable
from aalis_api_relation.inmemory import InMemoryRelation
from aalis_api_relation.ranking import rank
from aalis_api_relation.service import RelationService
from aalis_api_relation.types import (
    ATTRIBUTES,
    MULTI_VALUED,
    SINGLE_VALUED,
    Fact,
    PersonRef,
    is_single_valued,
)

__all__ = [
    "ATTRIBUTES",
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
]
