"""Keeping the PostgreSQL password out of every log line and error message.

The host's ``aalis_core.logging.redact`` masks ``scheme://user:password@`` and
``password=...`` wherever they appear, and its log processor applies it to every event. That
is the shared rule; this module adds what only the configured URI can tell: its secrets (the
userinfo password, and the ``password``/``sslpassword`` query parameters libpq accepts), which
a driver error may quote on their own, where no pattern matches. Those are masked literally in
any text the plugin prints or raises. memory-mongodb does the same for its URIs.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote

from aalis_core.logging import redact

MASK = "***"
# Masking a one- or two-character password literally would garble unrelated text and reveal
# where it occurs; such passwords are still masked inside the URI itself.
_MIN_LITERAL = 3
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def _split_userinfo(uri: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest)`` for a URI with credentials, else None."""
    scheme_end = uri.find("://")
    if scheme_end < 0:
        return None
    head = uri[: scheme_end + 3]
    tail = uri[scheme_end + 3 :]
    # The authority ends at the first "/" or "?"; a password must percent-encode "@", so the
    # last "@" before that is the separator.
    ends = [i for i in (tail.find("/"), tail.find("?")) if i >= 0]
    search_end = min(ends) if ends else len(tail)
    at = tail.rfind("@", 0, search_end)
    if at < 0:
        return None
    return head, tail[:at], tail[at + 1 :]


class Redactor:
    """Masks the credentials of one URI (and anything ``redact`` recognises) in text."""

    def __init__(self, uri: str | None) -> None:
        self._secrets: list[str] = []
        self.display = "<no uri>" if uri is None else self._display(uri)

    def _remember(self, secret: str) -> None:
        for value in {secret, unquote(secret)}:
            if len(value) >= _MIN_LITERAL and value not in self._secrets:
                self._secrets.append(value)
        # Longest first, so a secret that contains another is masked whole.
        self._secrets.sort(key=len, reverse=True)

    def _display(self, uri: str) -> str:
        query = uri.partition("?")[2]
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name.lower() in _SECRET_PARAMS and value:
                self._remember(value)
                # parse_qsl decoded it; the URI holds the encoded form.
                for raw in query.split("&"):
                    key, _, raw_value = raw.partition("=")
                    if key.lower() == name.lower():
                        self._remember(raw_value)
        parts = _split_userinfo(uri)
        if parts is not None:
            head, userinfo, rest = parts
            user, sep, password = userinfo.partition(":")
            if sep and password:
                self._remember(password)
                uri = f"{head}{user}:{MASK}@{rest}"
        return self(uri)

    def __call__(self, text: object) -> str:
        out = redact(str(text))
        for secret in self._secrets:
            out = out.replace(secret, MASK)
        return out


__all__ = ["MASK", "Redactor"]
