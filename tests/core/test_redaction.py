"""The one redaction rule: URIs, tokens and keys lose their values, messages keep their words."""

from __future__ import annotations

import pytest

from aalis_core._redaction import is_secret_key, redact, redact_uri, uri_secrets

SECRET = "S3cr3t-v4lue"


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (
            f"mongodb://app:{SECRET}@h1,h2/aalis?replicaSet=rs0&authMechanism=MONGODB-AWS"
            f"&authMechanismProperties=AWS_SESSION_TOKEN:{SECRET}",
            "mongodb://app:***@h1,h2/aalis?replicaSet=rs0&authMechanism=MONGODB-AWS"
            "&authMechanismProperties=***",
        ),
        (
            f"mongodb://db/aalis?tls=true&tlsCertificateKeyFilePassword={SECRET}",
            "mongodb://db/aalis?tls=true&tlsCertificateKeyFilePassword=***",
        ),
        (
            f"mongodb+srv://app@cluster/?AUTHSOURCE=admin&directConnection=false;x={SECRET}",
            "mongodb+srv://app@cluster/?AUTHSOURCE=admin&directConnection=false;x=***",
        ),
        (f"postgresql://u:{SECRET}@db:5432/aalis#{SECRET}", "postgresql://u:***@db:5432/aalis#***"),
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    ],
)
def test_a_uri_shows_hosts_and_safe_options_only(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
    assert redact(f"cannot reach {uri}: refused") == f"cannot reach {shown}: refused"


def test_the_secret_parts_of_a_uri_are_known_for_literal_masking() -> None:
    uri = f"mongodb://app:pw-{SECRET}@h/?authMechanismProperties=AWS_SESSION_TOKEN:{SECRET}&w=1"
    secrets = uri_secrets(uri)
    assert SECRET in secrets
    assert f"pw-{SECRET}" in secrets
    assert "1" not in secrets  # a safe option's value is not a secret


@pytest.mark.parametrize(
    "message",
    [
        "key 'api_key': environment variable NOPE is not set",
        "key 'apikey': unknown key; expected one of: uri, database",
        'key "token": expected a string, got integer 3',
    ],
)
def test_a_message_naming_a_secret_key_keeps_its_words(message: str) -> None:
    assert redact(message) == message


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"api_key={SECRET} next", "api_key=*** next"),
        (f'{{"api_key": "{SECRET}"}}', '{"api_key": "***"}'),
        (f"{{'password': '{SECRET}'}}", "{'password': '***'}"),
        (f"password: {SECRET}", "password: ***"),
        (f"Authorization: Bearer {SECRET}", "Authorization: Bearer ***"),
    ],
)
def test_assignments_lose_their_values_only(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_secret_looking_keys() -> None:
    for key in ("uri", "base_url", "api_key", "token", "client_secret", "password", "dsn"):
        assert is_secret_key(key), key
    for key in ("database", "path", "compress_at", "priority", None):
        assert not is_secret_key(key), key
