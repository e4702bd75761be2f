"""Configuration: ``aalis.toml`` read, substituted and validated before anything starts.

Why validate everything up front: a typo in a plugin's table found after half the plugins
started leaves a half-running agent and a message buried in the log. Here every problem of
the whole file is collected and reported together, each naming the file, the table, the key
and what was expected, and nothing starts.

Parsing happens in two steps because plugin tables can only be checked against the
plugins' ``Config`` classes once discovery has loaded them:

1. ``load_config`` / ``parse_config``: TOML, ``${NAME}`` substitution, ``[host]``, the shape
   of ``[plugins]``, ``[capabilities]`` and ``[consumers]`` -> ``HostConfig``.
2. ``validate_plugins`` (called by the host after discovery): every ``[plugins.<name>]``
   table into its plugin's attrs ``Config`` and every provider/consumer name against the
   installed plugins.

``structure(cls, table)`` is the small typed converter used for both ``[host]`` and every
plugin table. One module per job (docs/host/configuration-internals.md):

- ``errors``: ``ConfigProblem`` and ``ConfigError``;
- ``interpolation``: ``${NAME}`` substitution and ``EnvStr``;
- ``describe``: how types and refused values are named in messages;
- ``converter``: ``structure``, TOML values into attrs classes;
- ``host_tables``: ``HostSettings``, ``HostConfig``, ``parse_config`` (step 1);
- ``plugin_tables``: ``PluginSchema``, ``PluginConfigs``, ``validate_plugins`` (step 2);
- ``loading``: ``load_config``, the file itself.

Every public name is re-exported from ``aalis_core``.
"""

from __future__ import annotations

from aalis_core._config.converter import structure
from aalis_core._config.errors import ConfigError, ConfigProblem
from aalis_core._config.host_tables import (
    BUILTIN_CONSUMERS,
    DEFAULT_DATA_DIR,
    HostConfig,
    HostSettings,
    LogLevel,
    default_config,
    parse_config,
)
from aalis_core._config.interpolation import EnvStr
from aalis_core._config.loading import load_config
from aalis_core._config.plugin_tables import PluginConfigs, PluginSchema, validate_plugins
from aalis_core._config.validators import positive_int, positive_seconds

__all__ = [
    "BUILTIN_CONSUMERS",
    "DEFAULT_DATA_DIR",
    "ConfigError",
    "ConfigProblem",
    "EnvStr",
    "HostConfig",
    "HostSettings",
    "LogLevel",
    "PluginConfigs",
    "PluginSchema",
    "default_config",
    "load_config",
    "parse_config",
    "positive_int",
    "positive_seconds",
    "structure",
    "validate_plugins",
]
