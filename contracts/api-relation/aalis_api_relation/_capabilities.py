"""The capability descriptor this contract declares."""

from __future__ import annotations

from aalis_api_relation._service import RelationService
from aalis_core import Capability

relation: Capability[RelationService] = Capability("relation", RelationService)

__all__ = ["relation"]
