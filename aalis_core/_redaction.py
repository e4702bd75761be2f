"""Masking credentials in text: one rule for URIs, a few for keys and tokens.

Why one module: a URI is printed by the host (plugin errors), the CLI (error lines), the log
processor and backends (a MongoDB display name). When each had its own idea of what a secret
looks like, the userinfo password was masked and a session token in the query string was
not. Here ``redact_uri`` is the rule (see docs/host/redaction.md) and ``redact`` applies it,
with the key and token patterns, to any text.

The URI rule: ``scheme://user:***@hosts/path?`` with every option value masked except those
in ``SAFE_URI_OPTIONS`` (names such as ``replicaSet`` or ``tls`` that say how to connect,
never who you are). Masking an unknown option by default is the point: a driver adds a new
credential-bearing option more often than a user needs to read ``authMechanismProperties``.

Masking replaces values, never the words around them: ``key 'api_key': environment variable
NOPE is not set`` stays readable, ``api_key=sk123`` and ``{"api_key": "sk123"}`` do not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

#: URI options whose values are shown (compared case-insensitively, as MongoDB does): how to
#: reach and talk to the server, never a credential.
SAFE_URI_OPTIONS: frozenset[str] = frozenset(
    name.lower()
    for name in (
        "replicaSet",
        "authSource",
        "authMechanism",
        "tls",
        "ssl",
        "directConnection",
        "retryWrites",
        "retryReads",
        "w",
        "readPreference",
        "loadBalanced",
        "appName",
        # PostgreSQL (libpq) connection options of the same kind:
        "sslmode",
        "host",
        "port",
        "dbname",
        "application_name",
        "connect_timeout",
        "target_session_attrs",
    )
)

# A URI: scheme://, then everything up to whitespace, a quote or an angle bracket, less
# trailing punctuation of the sentence around it ("cannot reach mongodb://h/: refused").
_URI = re.compile(
    r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<rest>[^\s'\"<>`]*[^\s'\"<>`.,:;)\]])"
)
# Authorization headers and bearer tokens.
_BEARER = re.compile(r"(?P<prefix>\b(?:Bearer|Basic|Token)\s+)(?P<secret>[A-Za-z0-9._~+/=\-]{4,})")
# OpenAI-style and similar provider keys: sk-..., sk-proj-..., rk-..., pk-... (live/test).
_PROVIDER_KEY = re.compile(r"\b(?P<prefix>(?:sk|rk|pk)[-_])(?P<secret>[A-Za-z0-9_\-]{8,})")
_SECRET_NAME = (
    r"(?:api[_\-]?key|apikey|access[_\-]?key|secret(?:[_\-]?key)?|token|auth[_\-]?token|"
    r"access[_\-]?token|password|passwd|pwd|client[_\-]?secret)"
)
# key=value / key: value (an unquoted name: a log line, a query string, a header).
_SECRET_ASSIGN = re.compile(
    rf"(?P<prefix>(?<!\w){_SECRET_NAME}\s*[=:]\s*[\"']?)(?P<secret>[^\s\"'&,;}}]+)",
    re.IGNORECASE,
)
# "key": "value" / 'key': 'value' / "key": 123 (a quoted name: JSON or a dict's repr). The
# value must be quoted or a number, so ``key 'api_key': environment variable ...`` (a
# message naming a key, followed by words) keeps its words.
_SECRET_QUOTED = re.compile(
    rf"(?P<prefix>(?P<q>[\"']){_SECRET_NAME}(?P=q)\s*[=:]\s*)"
    r"(?P<secret>\"[^\"]*\"|'[^']*'|[0-9][^\s,;}\]]*)",
    re.IGNORECASE,
)


def _split_authority(rest: str) -> tuple[str, str, str]:
    """``(userinfo, hosts_and_path, query_and_fragment)``; userinfo without its ``@``.

    The query starts at the first ``?`` (or the fragment at a ``#`` before any ``?``); the userinfo ends at the last ``@`` before it (a
    password must percent-encode ``@``, but drivers accept a bare one more often than not).
    """
    marks = [i for i in (rest.find("?"), rest.find("#")) if i >= 0]
    query_at = min(marks) if marks else -1
    head, query = (rest, "") if query_at < 0 else (rest[:query_at], rest[query_at:])
    at = head.rfind("@")
    if at < 0:
        return "", head, query
    return head[:at], head[at + 1 :], query


def _mask_query(query: str) -> str:
    """``?a=1&b=2#frag`` with every value but the safe options' masked (the fragment too)."""
    if not query:
        return query
    if query.startswith("#"):
        return "#" + (MASK if len(query) > 1 else "")
    body, hash_sign, fragment = query[1:].partition("#")
    parts = re.split(r"([&;])", body)
    out: list[str] = []
    for part in parts:
        if part in ("&", ";") or "=" not in part:
            out.append(part)
            continue
        name, _, value = part.partition("=")
        shown = value if name.lower() in SAFE_URI_OPTIONS or not value else MASK
        out.append(f"{name}={shown}")
    masked = "?" + "".join(out)
    if hash_sign:
        masked += "#" + (MASK if fragment else "")
    return masked


def redact_uri(uri: str) -> str:
    """One URI as it may be printed: ``scheme://user:***@hosts/db?replicaSet=rs&token=***``.

    Text that is not ``scheme://...`` is returned unchanged.
    """
    match = _URI.fullmatch(uri)
    if match is None:
        return uri
    return _redact_uri_match(match)


def _redact_uri_match(match: re.Match[str]) -> str:
    userinfo, hosts, query = _split_authority(match["rest"])
    if userinfo:
        user, sep, _password = userinfo.partition(":")
        userinfo = f"{user}:{MASK}@" if sep else f"{user}@"
    return f"{match['scheme']}{userinfo}{hosts}{_mask_query(query)}"


def uri_secrets(uri: str) -> list[str]:
    """The secret parts of ``uri`` as they may appear on their own in a driver's message.

    The password (raw and percent-decoded) and the value of every option that is not safe,
    with the parts of ``NAME:VALUE,NAME:VALUE`` lists; each at least 3 characters (shorter
    ones would garble unrelated text). Longest first, so a secret containing another is
    masked whole.
    """
    from urllib.parse import unquote

    match = _URI.fullmatch(uri)
    if match is None:
        return []
    userinfo, _, query = _split_authority(match["rest"])
    found: set[str] = set()
    if ":" in userinfo:
        password = userinfo.partition(":")[2]
        found |= {password, unquote(password)}
    body = query[1:].partition("#")[0]
    for part in re.split(r"[&;]", body):
        name, sep, value = part.partition("=")
        if not sep or name.lower() in SAFE_URI_OPTIONS:
            continue
        for candidate in (value, unquote(value)):
            found.add(candidate)
            for item in re.split(r"[,]", candidate):
                found.add(item)
                found.add(item.partition(":")[2])
    return sorted((s for s in found if len(s) >= 3), key=len, reverse=True)


def redact(text: str) -> str:
    """Return ``text`` with credentials masked (values only; the words around them stay).

    Every URI follows ``redact_uri``; bearer tokens, ``sk-...`` keys and ``api_key=...`` or
    ``"api_key": "..."`` assignments keep their label and lose their value. The patterns err
    on the side of masking values: a false positive costs a few characters of a log line, a
    false negative leaks a secret.
    """
    if not text:
        return text
    text = _URI.sub(_redact_uri_match, text)
    text = _BEARER.sub(lambda m: f"{m['prefix']}{MASK}", text)
    text = _PROVIDER_KEY.sub(lambda m: f"{m['prefix']}{MASK}", text)
    text = _SECRET_QUOTED.sub(lambda m: _quoted_mask(m), text)
    text = _SECRET_ASSIGN.sub(lambda m: f"{m['prefix']}{MASK}", text)
    return text


def _quoted_mask(match: re.Match[str]) -> str:
    secret = match["secret"]
    quote = secret[0] if secret[0] in "\"'" else ""
    return f"{match['prefix']}{quote}{MASK}{quote}"


def redact_value(value: Any) -> Any:
    """Redact strings inside ``value`` (recursing into dicts, lists and tuples).

    Other objects are rendered with ``str`` only when that rendering contains something to
    mask: an exception or a URL object quoting a password must not slip past as a repr.
    """
    if isinstance(value, str):
        return redact(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    try:
        rendered = str(value)
    except Exception:  # a broken __str__ must not break logging
        return value
    masked = redact(rendered)
    return masked if masked != rendered else value


#: Key names whose values a validation message must never echo (a secret put under the
#: wrong key is still a secret): matched anywhere in the key, case-insensitively.
_SECRET_KEY = re.compile(
    r"uri|url|dsn|key|secret|token|passw|pwd|credential|auth|cert", re.IGNORECASE
)


def is_secret_key(key: str | None) -> bool:
    """True for setting names that may hold a credential (``uri``, ``api_key``, ``token``...)."""
    return bool(key) and _SECRET_KEY.search(key or "") is not None


class UriRedactor:
    """Masks the credentials of one configured URI, and anything ``redact`` recognises, in text.

    ``display`` is the URI as it may be printed. Calling the redactor also masks the URI's
    secrets (``uri_secrets``) literally: a driver error may quote a password or a token on its
    own, where no URI pattern matches. The database backends (MongoDB, PostgreSQL) each wrap
    their configured URI in one.
    """

    def __init__(self, uri: str | None) -> None:
        self._secrets: list[str] = [] if uri is None else uri_secrets(uri)
        self.display = "<no uri>" if uri is None else self(redact_uri(uri))

    def __call__(self, text: object) -> str:
        out = redact(str(text))
        for secret in self._secrets:
            out = out.replace(secret, MASK)
        return out


__all__ = [
    "MASK",
    "SAFE_URI_OPTIONS",
    "UriRedactor",
    "is_secret_key",
    "redact",
    "redact_uri",
    "redact_value",
    "uri_secrets",
]
