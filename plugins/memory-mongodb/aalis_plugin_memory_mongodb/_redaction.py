"""Keeping the MongoDB credentials out of every log line and error message.

The URI is displayed by the host's one rule (``aalis_core._redaction.redact_uri``): the
password and every option value but a few harmless ones (``replicaSet``, ``tls``...) are
masked, so ``authMechanismProperties=AWS_SESSION_TOKEN:...`` or
``tlsCertificateKeyFilePassword=...`` never print. Driver errors, though, may quote a secret
on its own (an authentication failure naming the credential, an ``InvalidURI`` echoing a
fragment), where no URI pattern matches; the shared ``UriRedactor`` also masks the configured
URI's secrets literally in any text the plugin prints or raises.
"""

from __future__ import annotations

from aalis_core import MASK, UriRedactor as Redactor

__all__ = ["MASK", "Redactor"]
