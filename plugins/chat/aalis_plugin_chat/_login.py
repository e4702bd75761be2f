"""Who is typing: the OS login, as the ``user_id`` of the person the chat stamps.

Recall in ``user`` mode and forgetting a person read who wrote a message from its metadata
(docs/reference/turn.md), so every user message the chat saves names its speaker: the
platform from ``[plugins.chat]`` (``cli``) and the account that runs ``aalis chat``.
"""

from __future__ import annotations

import getpass
import os

#: The user id when the OS names no account at all (no login name, no numeric id).
UNKNOWN = "unknown"


def os_login() -> str:
    """The login name of this process's user; without one (a container without a passwd
    entry, say), ``uid-N`` for the numeric account, which still tells accounts apart."""
    try:
        name = getpass.getuser().strip()
    except (OSError, KeyError, ImportError):  # KeyError/ImportError: older Pythons, Windows
        name = ""
    if name:
        return name
    getuid = getattr(os, "getuid", None)
    return f"uid-{getuid()}" if getuid is not None else UNKNOWN


__all__ = ["UNKNOWN", "os_login"]
