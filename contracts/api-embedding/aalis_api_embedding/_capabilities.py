"""The ``embedding`` capability descriptor.

A consumer declares ``uses = {"embedding": embedding}`` and calls
``ctx.caps.embedding.use.embed_query(...)``; which provider answers is the host's binding
(``[capabilities.embedding] provider = "embedding-openai"``, else the highest priority).
"""

from __future__ import annotations

from aalis_api_embedding._embedder import Embedder
from aalis_core import Capability

embedding: Capability[Embedder] = Capability("embedding", Embedder)

__all__ = ["embedding"]
