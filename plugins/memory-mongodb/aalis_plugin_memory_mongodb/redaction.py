"""Keeping the MongoDB password out of every log line and error message.

The host's ``aalis_core.logging.redact`` masks ``scheme://user:password@`` wherever it
appears, and its log processor applies it to every event. Driver errors, though, may quote the
password on its own (an authentication failure naming the credential, an ``InvalidURI`` echoing
a fragment), where no URI pattern matches. So this module also remembers the secrets of the
configured URI and masks those literally in any text the plugin prints or raises.
"""

from __future__ import annotations

from urllib.parse import unquote

from aalis_core.logging import redact

MASK = "***"
# Masking a one- or two-character password literally would garble unrelated text and reveal
# where it occurs; such passwords are still masked inside the URI itself.
_MIN_LITERAL = 3


def _split_userinfo(uri: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest)`` for a URI with credentials, else None."""
    scheme_end = uri.find("://")
    if scheme_end < 0:
        return None
    head = uri[: scheme_end + 3]
    tail = uri[scheme_end + 3 :]
    # The host list ends at the first "/" or "?" after the userinfo; a password must
    # percent-encode "@", so the last "@" before the query is the separator.
    query_at = tail.find("?")
    search_end = len(tail) if query_at < 0 else query_at
    at = tail.rfind("@", 0, search_end)
    if at < 0:
        return None
    return head, tail[:at], tail[at + 1 :]


class Redactor:
    """Masks the credentials of one URI (and anything ``redact`` recognises) in text."""

    def __init__(self, uri: str | None) -> None:
        self._secrets: list[str] = []
        self.display = "<no uri>" if uri is None else self._display(uri)

    def _display(self, uri: str) -> str:
        parts = _split_userinfo(uri)
        if parts is None:
            return redact(uri)
        head, userinfo, rest = parts
        user, sep, password = userinfo.partition(":")
        if sep:
            for secret in {password, unquote(password)}:
                if len(secret) >= _MIN_LITERAL:
                    self._secrets.append(secret)
            # Longest first, so a secret that contains another is masked whole.
            self._secrets.sort(key=len, reverse=True)
            return redact(f"{head}{user}:{MASK}@{rest}")
        return redact(uri)

    def __call__(self, text: object) -> str:
        out = redact(str(text))
        for secret in self._secrets:
            out = out.replace(secret, MASK)
        return out


__all__ = ["MASK", "Redactor"]
