"""Keeping the MongoDB credentials out of every log line and error message.

The URI is displayed by the host's one rule (``aalis_core.redaction.redact_uri``): the
password and every option value but a few harmless ones (``replicaSet``, ``tls``...) are
masked, so ``authMechanismProperties=AWS_SESSION_TOKEN:...`` or
``tlsCertificateKeyFilePassword=...`` never print. Driver errors, though, may quote a secret
on its own (an authentication failure naming the credential, an ``InvalidURI`` echoing a
fragment), where no URI pattern matches. So this module also remembers the secrets of the
configured URI (``uri_secrets``) and masks those literally in any text the plugin prints or
raises.
"""

from __future__ import annotations

from aalis_core.redaction import MASK, redact, redact_uri, uri_secrets


class Redactor:
    """Masks the credentials of one URI (and anything ``redact`` recognises) in text."""

    def __init__(self, uri: str | None) -> None:
        self._secrets: list[str] = [] if uri is None else uri_secrets(uri)
        self.display = "<no uri>" if uri is None else redact(redact_uri(uri))

    def __call__(self, text: object) -> str:
        out = redact(str(text))
        for secret in self._secrets:
            out = out.replace(secret, MASK)
        return out


__all__ = ["MASK", "Redactor"]
