"""Keeping the PostgreSQL password out of every log line and error message.

The URI is printed by the host's one rule (``aalis_core.redaction``, docs/host/redaction.md):
the userinfo password and every option value but a short allow-list are masked. What only
the configured URI can tell is its secrets as a driver error may quote them on their own,
where no pattern matches; those are masked literally in any text the plugin prints or raises.
memory-mongodb does the same for its URIs.
"""

from __future__ import annotations

from aalis_core.redaction import MASK, redact, redact_uri, uri_secrets


class Redactor:
    """Masks the credentials of one URI (and anything ``redact`` recognises) in text."""

    def __init__(self, uri: str | None) -> None:
        self._secrets: list[str] = [] if uri is None else uri_secrets(uri)
        self.display = "<no uri>" if uri is None else self(redact_uri(uri))

    def __call__(self, text: object) -> str:
        out = redact(str(text))
        for secret in self._secrets:
            out = out.replace(secret, MASK)
        return out


__all__ = ["MASK", "Redactor"]
