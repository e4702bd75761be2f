"""The hookspecs ``aalis_core`` itself declares (contracts publish theirs separately).

Only what the host needs without any domain: commands joining the ``aalis`` CLI. Every
other hook (``memory_clear``, the events) belongs to a contract. Every hook, whoever declares
it, has its section in docs/reference/hooks.md.
"""

from __future__ import annotations

from typing import Any

from aalis_core._markers import hookspec


@hookspec
def register_commands(cli: Any) -> None:
    """Add click commands or groups to the ``aalis`` CLI group ``cli``.

    Called at CLI start-up on every discovered (and not disabled) plugin, *without*
    starting it, so implementations must be cheap: define commands, import heavy modules
    inside the command bodies. Commands that need the host use
    ``aalis_core._cli.open_host()`` and ``aalis_core._cli.run_async()``.
    """


__all__ = ["register_commands"]
