"""The pluggy markers every Aalis hookspec and hookimpl uses.

One project name ("aalis") ties contracts' hookspecs and plugins' hookimpls to the same
plugin manager; keeping the markers in their own tiny module keeps ``import aalis_core`` cheap.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "aalis"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]
