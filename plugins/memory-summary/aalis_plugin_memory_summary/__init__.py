"""Aalis compression provider ``memory-summary``: cumulative summaries of long sessions."""

from aalis_plugin_memory_summary.config import MemorySummaryConfig, PlatformProfile
from aalis_plugin_memory_summary.plugin import MemorySummary
from aalis_plugin_memory_summary.service import CompressionOutcome, SummaryCompression

__all__ = [
    "CompressionOutcome",
    "MemorySummary",
    "MemorySummaryConfig",
    "PlatformProfile",
    "SummaryCompression",
]
