"""Which sessions a recall may read: ``cross_session_mode``, layered, narrowest on error.

The layers are the session's own override (a metadata entry), then the profile of the
session's platform, then the plugin default. The first layer that *has* a value decides; a
value that is not a mode means ``isolated``. A broken layer never falls through to a wider
one: a typo must not turn a private session into a shared one.
"""

from __future__ import annotations

from typing import Literal

import attrs

Mode = Literal["isolated", "user", "platform", "all"]
MODES: tuple[Mode, ...] = ("isolated", "user", "platform", "all")

#: Metadata namespace of the per-session overrides: key = session id,
#: data = ``{"cross_session_mode": <mode>}``.
OVERRIDES_NAMESPACE = "memory-vector.sessions"

UNSET: object = object()  # "this layer has no value", as opposed to an invalid one
_UNSET = UNSET


@attrs.frozen
class ResolvedMode:
    """The mode in force and the layer it came from (shown by ``aalis vector status``)."""

    mode: Mode
    layer: Literal["session", "platform", "default"]
    #: The raw value when it was invalid (then ``mode`` is ``isolated``), else None.
    invalid: object = None


def as_mode(value: object) -> Mode | None:
    """``value`` as a mode, or None when it is not one (case and spaces are not forgiven)."""
    for mode in MODES:
        if value == mode and isinstance(value, str):
            return mode
    return None


def resolve_mode(
    session_value: object = _UNSET,
    platform_value: object = _UNSET,
    default_value: object = "all",
) -> ResolvedMode:
    """The mode of a session from its three layers; pass only the layers that are set."""
    layers: tuple[tuple[Literal["session", "platform", "default"], object], ...] = (
        ("session", session_value),
        ("platform", platform_value),
        ("default", default_value),
    )
    for layer, value in layers:
        if value is _UNSET:
            continue
        mode = as_mode(value)
        if mode is None:
            return ResolvedMode("isolated", layer, invalid=value)
        return ResolvedMode(mode, layer)
    return ResolvedMode("isolated", "default", invalid=None)  # pragma: no cover - default set


__all__ = [
    "MODES",
    "OVERRIDES_NAMESPACE",
    "UNSET",
    "Mode",
    "ResolvedMode",
    "as_mode",
    "resolve_mode",
]
