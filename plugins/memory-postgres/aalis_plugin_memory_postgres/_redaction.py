"""Keeping the PostgreSQL password out of every log line and error message.

The URI is printed by the host's one rule (``aalis_core._redaction``, docs/host/redaction.md):
the userinfo password and every option value but a short allow-list are masked. A driver error
may quote a secret on its own, where no pattern matches; the shared ``UriRedactor`` also masks
the configured URI's secrets literally in any text the plugin prints or raises.
"""

from __future__ import annotations

from aalis_core import MASK, UriRedactor as Redactor

__all__ = ["MASK", "Redactor"]
