"""Click parameter types that more than one module of memory commands takes.

Apart from ``cli_plugin.py`` (which registers every memory command, ``export``/``import``/
``migrate`` included) so that the modules it registers can use them without importing the
registering module back.
"""

from __future__ import annotations

from typing import Any

import click


class SessionId(click.ParamType):  # type: ignore[type-arg]
    """A session id as commands take it: any non-empty string.

    Refused here, at the command line, rather than by the store, so ``aalis history ""``
    says what is wrong in click's usual way instead of reading an empty session.
    """

    name = "SESSION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        if value == "":
            self.fail("a session id must not be empty", param, ctx)
        return value


SESSION = SessionId()


__all__ = ["SESSION", "SessionId"]
