"""The URI's password never reaches a log line or an error message."""

from __future__ import annotations

import pytest
from aalis_plugin_memory_mongodb._redaction import Redactor

SECRET = "pa55-w0rd"


@pytest.mark.parametrize(
    ("uri", "display"),
    [
        (
            f"mongodb://user:{SECRET}@h1:27017,h2/db?replicaSet=rs",
            "mongodb://user:***@h1:27017,h2/db?replicaSet=rs",
        ),
        (
            f"mongodb+srv://user:{SECRET}@cluster.example.net/",
            "mongodb+srv://user:***@cluster.example.net/",
        ),
        ("mongodb://user:p%40ss%2Fw0rd@h/", "mongodb://user:***@h/"),
        ("mongodb://user@h/", "mongodb://user@h/"),
        ("mongodb://h:27017/", "mongodb://h:27017/"),
        (f"mongodb://user:{SECRET}@h/?appName=a@b", "mongodb://user:***@h/?appName=a@b"),
    ],
)
def test_display_masks_the_password(uri, display):
    assert Redactor(uri).display == display


def test_bare_password_is_masked_in_any_text():
    redactor = Redactor(f"mongodb://user:{SECRET}@h/")
    text = redactor(f"auth failed for user 'user' with password {SECRET} (again: {SECRET})")
    assert SECRET not in text
    assert text.count("***") == 2


def test_percent_encoded_password_is_masked_in_both_forms():
    redactor = Redactor("mongodb://user:p%40ssw0rd@h/")
    assert "p@ssw0rd" not in redactor("decoded p@ssw0rd")
    assert "p%40ssw0rd" not in redactor("raw p%40ssw0rd")


def test_other_uris_in_a_message_are_masked_too():
    redactor = Redactor(None)
    assert redactor.display == "<no uri>"
    assert "hunter2x" not in redactor("could not reach mongodb://x:hunter2x@other/")


def test_short_passwords_are_masked_in_the_uri_only():
    redactor = Redactor("mongodb://u:ab@h/")
    assert redactor.display == "mongodb://u:***@h/"
    assert redactor("a table of abc") == "a table of abc"
