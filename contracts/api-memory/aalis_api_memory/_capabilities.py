"""The capability descriptors this contract declares."""

from __future__ import annotations

from aalis_api_memory._compression import CompressionService
from aalis_api_memory._service import MemoryService
from aalis_core import Capability


def _hold_adapter(instance: object) -> MemoryService:
    # Every provider is wrapped once so that run_clear can hold sessions across all consumers
    # of that provider (a save during a clear waits and lands after it).
    from aalis_api_memory._holds import HeldMemory

    return HeldMemory(instance)


memory: Capability[MemoryService] = Capability("memory", MemoryService, adapter=_hold_adapter)
compression: Capability[CompressionService] = Capability("compression", CompressionService)

#: What every surface (``/compress`` in the chat, ``aalis compress``, ``aalis serve``) says when
#: no compression provider is bound: a newcomer who installed the host and the chat alone must
#: learn which distribution to install, not just that something is missing.
COMPRESSION_ABSENT = (
    "no compression provider is active: install the distribution aalis-plugin-memory-summary "
    "(pip install aalis-plugin-memory-summary), or run `aalis plugins` to see why it is not active"
)

__all__ = ["COMPRESSION_ABSENT", "compression", "memory"]
