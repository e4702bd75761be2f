"""Capability descriptors and the handles consumers receive.

A contract declares ``memory = Capability("memory", MemoryService)``; the host binds every
consumer to at most one provider per capability. The handle is the only thing a consumer keeps,
so absence is always explicit (``present``) and never an AttributeError deep in a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from aalis_core._errors import AalisError

T = TypeVar("T")


class CapabilityAbsent(AalisError, RuntimeError):
    """Raised when a consumer uses a capability that has no active provider for it."""

    def __init__(self, capability: str, consumer: str, reason: str | None = None) -> None:
        self.capability = capability
        self.consumer = consumer
        self.reason = reason
        text = f"capability {capability!r} is not present for consumer {consumer!r}"
        if reason:
            text += f" ({reason})"
        super().__init__(text)


class Capability(Generic[T]):
    """A named, typed capability that plugins provide and consume.

    ``adapter`` lets a contract wrap every provider instance once (for example to add
    session holds around a storage backend) without the host knowing the domain.
    Identity matters: ``provides``/``uses`` hold these objects, not names.
    """

    __slots__ = ("adapter", "name", "protocol")

    def __init__(
        self,
        name: str,
        protocol: type[T] | Any,
        *,
        adapter: Callable[[Any], Any] | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError("capability name must be a non-empty string")
        self.name = name
        self.protocol = protocol
        self.adapter = adapter

    def __repr__(self) -> str:
        return f"Capability({self.name!r})"


__all__ = ["Capability", "CapabilityAbsent"]
