"""Which sessions a recall may read: ``cross_session_mode``, layered, narrowest on error.

The layers are the session's own override (a metadata entry), then the profile of the
session's platform, then the plugin default (``user``: see docs/host/privacy.md). The first
layer that *has* a value decides; a value that is not a mode means ``isolated``. A broken
layer never falls through to a wider one: a typo must not turn a private session into a
shared one. An override entry is ``{"cross_session_mode": <mode>}`` exactly; an entry with
any other shape (a misspelt or extra key, a value of the wrong type) is a broken layer too.
"""

from __future__ import annotations

from typing import Literal

import attrs

Mode = Literal["isolated", "user", "platform", "all"]
MODES: tuple[Mode, ...] = ("isolated", "user", "platform", "all")

#: Metadata namespace of the per-session overrides: key = session id,
#: data = ``{"cross_session_mode": <mode>}``.
OVERRIDES_NAMESPACE = "memory-vector.sessions"
#: The one key of an override entry.
OVERRIDE_KEY = "cross_session_mode"
#: The plugin default: recall reaches only the sessions of the same person.
DEFAULT_MODE: Mode = "user"

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
    default_value: object = DEFAULT_MODE,
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


class MalformedOverride:
    """An override entry that exists but is not ``{"cross_session_mode": <str>}``: the
    session layer is set, and broken (so the session is ``isolated``)."""

    def __init__(self, data: object) -> None:
        self.data = data

    def __repr__(self) -> str:
        return repr(self.data)


def override_value(data: object) -> object:
    """The session layer's value for a stored override entry: ``UNSET`` when there is no
    entry, the mode string when the entry is well formed, else a ``MalformedOverride``."""
    if data is None:
        return UNSET
    if (
        isinstance(data, dict)
        and set(data) == {OVERRIDE_KEY}
        and isinstance(data[OVERRIDE_KEY], str)
    ):
        return data[OVERRIDE_KEY]
    return MalformedOverride(data)


__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "OVERRIDES_NAMESPACE",
    "OVERRIDE_KEY",
    "UNSET",
    "MalformedOverride",
    "Mode",
    "ResolvedMode",
    "as_mode",
    "override_value",
    "resolve_mode",
]
