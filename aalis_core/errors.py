"""The root of every error Aalis raises on purpose, and the host's own errors.

One root lets an application catch "anything Aalis refused or could not do" in one clause
while a programming error (``TypeError`` from a wrong call, say) still surfaces as itself.
Each layer adds its own base under the root and documents its tree in its errors module:
``aalis_api_memory._errors``, ``aalis_api_llm.errors``, ``aalis_api_embedding.errors``,
``aalis_api_vectorstore.errors``. A plugin's errors derive from its contract's base.
Classes keep a built-in base where callers already catch one (``ConfigError`` is a
``ValueError``), so adding the root changed no ``except`` clause. See docs/architecture.md.

The host's tree (``tests/test_architecture.py`` checks that every exception class defined in
``aalis_core`` is in it and derives from ``AalisError``)::

    AalisError
    ├── ConfigError (ValueError)         aalis_core.config: the configuration is invalid
    ├── PluginDisabled                   aalis_core.plugin: installed, deliberately unconfigured
    ├── PluginTimeout                    aalis_core.containment: plugin code ran past its limit
    ├── PluginAborted                    aalis_core.containment: plugin code raised SystemExit...
    ├── CapabilityAbsent (RuntimeError)  aalis_core.capability: no active provider
    ├── CallNextNotAwaited (RuntimeError) aalis_core.hook_runner: a middleware dropped call_next()
    └── serve's request outcomes          Denied, BadRequest, NotFound (a plugin with no contract),
                                         NotConfirmed (ValueError), TurnChanged (ValueError)
"""

from __future__ import annotations


class AalisError(Exception):
    """Base class of every error Aalis and its plugins raise on purpose."""


__all__ = ["AalisError"]
