"""The URI's password never reaches a log line or an error message."""

from __future__ import annotations

import pytest
from aalis_plugin_memory_postgres._redaction import Redactor

SECRET = "pa55-w0rd"


@pytest.mark.parametrize(
    ("uri", "display"),
    [
        (f"postgresql://user:{SECRET}@db:5432/agents", "postgresql://user:***@db:5432/agents"),
        (
            f"postgres://user:{SECRET}@db/agents?sslmode=require",
            "postgres://user:***@db/agents?sslmode=require",
        ),
        ("postgresql://user:p%40ss%2Fw0rd@h/db", "postgresql://user:***@h/db"),
        (f"postgresql://user@h/db?password={SECRET}", "postgresql://user@h/db?password=***"),
        # Unknown options are masked too (one rule for every URI: docs/host/redaction.md).
        (f"postgresql://h/db?sslpassword={SECRET}&x=1", "postgresql://h/db?sslpassword=***&x=***"),
        ("postgresql://user@h/db", "postgresql://user@h/db"),
        ("postgresql:///db?host=/run/postgresql", "postgresql:///db?host=/run/postgresql"),
    ],
)
def test_display_masks_the_password(uri, display):
    assert Redactor(uri).display == display


def test_bare_password_is_masked_in_any_text():
    redactor = Redactor(f"postgresql://user:{SECRET}@h/db")
    text = redactor(f'password authentication failed: "{SECRET}" (again: {SECRET})')
    assert SECRET not in text
    assert text.count("***") == 2


def test_percent_encoded_password_is_masked_in_both_forms():
    redactor = Redactor("postgresql://user:p%40ssw0rd@h/db")
    assert "p@ssw0rd" not in redactor("decoded p@ssw0rd")
    assert "p%40ssw0rd" not in redactor("raw p%40ssw0rd")


def test_other_uris_in_a_message_are_masked_too():
    redactor = Redactor(None)
    assert redactor.display == "<no uri>"
    assert "hunter2x" not in redactor("could not reach postgresql://x:hunter2x@other/db")


def test_short_passwords_are_masked_in_the_uri_only():
    redactor = Redactor("postgresql://u:ab@h/db")
    assert redactor.display == "postgresql://u:***@h/db"
    assert redactor("a table of abc") == "a table of abc"
