"""``[plugins.serve]``: where the server listens, its token and its limits."""

from __future__ import annotations

import ipaddress
from typing import Any

import attrs


def _port(inst: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ValueError(f"{attribute.name} must be an int from 0 to 65535")


def _positive(inst: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{attribute.name} must be a positive int")


def _token(inst: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    # The value itself is never echoed: it is a secret.
    if value is not None and (not isinstance(value, str) or len(value) < 16):
        raise ValueError(f"{attribute.name} must be a string of at least 16 characters")


def is_loopback(host: str) -> bool:
    """True for the addresses and names that only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@attrs.frozen(kw_only=True)
class ServeConfig:
    #: Address to bind; anything but loopback needs ``token``.
    host: str = "127.0.0.1"
    #: Port to bind (0 picks a free one and prints it).
    port: int = attrs.field(default=8765, validator=_port)
    #: Required to bind anywhere but loopback; write with ``"${AALIS_SERVE_TOKEN}"``. Without
    #: one, ``aalis serve`` makes a token for the run and prints the page's address with it.
    token: str | None = attrs.field(default=None, validator=_token, repr=False)
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = attrs.field(default=65536, validator=_positive)
    #: Messages a timeline shows at most (the newest ones).
    timeline_limit: int = attrs.field(default=500, validator=_positive)
    #: Events buffered per event-stream client before it is told to reload instead.
    client_queue: int = attrs.field(default=256, validator=_positive)


__all__ = ["ServeConfig", "is_loopback"]
