"""Every per-session ``cross_session_mode`` override, valid or not, for ``aalis vector status``.

A session's own setting is the narrowest way to widen (or close) its recall, so an operator
must be able to see all of them at once, and above all the broken ones: a broken override
silently makes its session ``isolated`` (see docs/host/privacy.md).
"""

from __future__ import annotations

from aalis_api_memory import MemoryService, MetadataKeys, supports

from aalis_plugin_memory_vector._scope import (
    OVERRIDES_NAMESPACE,
    UNSET,
    as_mode,
    override_value,
)


async def session_overrides(memory: MemoryService) -> list[tuple[str, object]]:
    """``(session id, value)`` per override entry, sorted by session id: the value is a
    mode, or what made the entry invalid (unreadable entries included when the backend
    lists keys)."""
    if supports(memory, MetadataKeys, "list_metadata_keys"):
        keys = list(await memory.list_metadata_keys(OVERRIDES_NAMESPACE))
    else:
        keys = [entry.key for entry in await memory.list_metadata(OVERRIDES_NAMESPACE)]
    found: list[tuple[str, object]] = []
    for key in sorted(keys):
        data = await memory.get_metadata(OVERRIDES_NAMESPACE, key)
        value = override_value(data)
        found.append((key, "<unreadable entry>" if value is UNSET else value))
    return found


async def override_lines(memory: MemoryService) -> list[str]:
    """The status lines: a count, then one line per override (invalid ones say so)."""
    overrides = await session_overrides(memory)
    invalid = [sid for sid, value in overrides if as_mode(value) is None]
    lines = [f"session overrides: {len(overrides)} ({len(invalid)} invalid)"]
    for sid, value in overrides:
        mode = as_mode(value)
        shown = mode if mode is not None else f"{value!r} (invalid: isolated)"
        lines.append(f"  session {sid}: {shown}")
    return lines


__all__ = ["override_lines", "session_overrides"]
