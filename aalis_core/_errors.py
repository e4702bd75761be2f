"""The root of every error Aalis raises on purpose, and the host's own errors.

One root lets an application catch "anything Aalis refused or could not do" in one clause
while a programming error (``TypeError`` from a wrong call, say) still surfaces as itself.
Each contract adds its own base under the root and draws its own tree in its errors module;
a plugin's errors derive from its contract's base. Classes keep a built-in base where callers
already catch one (``ConfigError`` is a ``ValueError``), so adding the root changed no
``except`` clause. Other packages subclass ``AalisError``; the tree across every package is
docs/reference/errors.md.

The host's own tree (``tests/test_errors.py`` checks that it names exactly the exception
classes ``aalis_core`` defines, under their real parents)::

    AalisError
    ├── ConfigError (ValueError)         aalis_core._config: the configuration is invalid
    ├── PluginDisabled                   aalis_core._plugin: installed, deliberately unconfigured
    ├── PluginTimeout                    aalis_core._containment: plugin code ran past its limit
    ├── PluginAborted                    aalis_core._containment: plugin code raised SystemExit...
    ├── CapabilityAbsent (RuntimeError)  aalis_core._capability: no active provider
    └── CallNextNotAwaited (RuntimeError) aalis_core._hook_runner: a middleware dropped call_next()
"""

from __future__ import annotations


class AalisError(Exception):
    """Base class of every error Aalis and its plugins raise on purpose."""


__all__ = ["AalisError"]
