"""The host's own tables: ``[host]``, and the shape of ``[plugins]``, ``[capabilities]``,
``[consumers]``.

``parse_config`` is step one of validation (the package docstring tells both steps): it
substitutes ``${NAME}``, structures ``[host]`` into ``HostSettings`` with the same converter
as plugin tables, and checks the routing tables' shape (which plugin is disabled, which
provider a capability or a consumer is pinned to). Whether those names are installed plugins
is step two (``plugin_tables.validate_plugins``), once discovery knows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from aalis_core._config.converter import structure_into
from aalis_core._config.describe import describe_value
from aalis_core._config.errors import ConfigError, ConfigProblem
from aalis_core._config.interpolation import substitute_env

DEFAULT_DATA_DIR = ".aalis"
#: Consumer names that are not plugins (docs/host/providers.md).
BUILTIN_CONSUMERS = ("host", "cli")
_TOP_LEVEL = ("host", "plugins", "capabilities", "consumers")


LogLevel = Literal["debug", "info", "warning", "error", "critical"]


def _positive_seconds(inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not (0 < value < float("inf")):
        raise ValueError(f"{attribute.name} must be a positive number of seconds")


@attrs.frozen
class HostSettings:
    """The ``[host]`` table.

    The three time limits bound plugin code (docs/host/time-limits.md): ``start`` and
    ``stop`` per plugin, ``hook_timeout`` per middleware and per event listener.
    """

    data_dir: str = DEFAULT_DATA_DIR
    log_level: LogLevel = "info"
    log_format: Literal["console", "json"] | None = None
    start_timeout: float = attrs.field(default=30.0, validator=_positive_seconds)
    stop_timeout: float = attrs.field(default=10.0, validator=_positive_seconds)
    hook_timeout: float = attrs.field(default=30.0, validator=_positive_seconds)


@attrs.frozen
class HostConfig:
    """A configuration whose shape is valid (plugin tables are checked after discovery)."""

    source: str
    base_dir: Path
    host: HostSettings = HostSettings()
    host_keys: frozenset[str] = frozenset()
    disabled: tuple[str, ...] = ()
    plugin_tables: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    #: problems found while substituting ``${NAME}`` in a plugin's table, by plugin name
    plugin_problems: Mapping[str, tuple[ConfigProblem, ...]] = attrs.field(factory=dict)
    capabilities: Mapping[str, str] = attrs.field(factory=dict)
    consumers: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)

    @property
    def data_dir(self) -> Path:
        """``[host] data_dir`` resolved against the config file's folder (or the cwd)."""
        path = Path(self.host.data_dir).expanduser()
        return path if path.is_absolute() else (self.base_dir / path)

    def problem(self, table: str | None, key: str | None, message: str) -> ConfigProblem:
        """A problem located in this configuration."""
        return ConfigProblem(self.source, table, key, message)


def default_config() -> HostConfig:
    """The embedded default: no file, data under ``./.aalis``, every installed plugin."""
    return HostConfig(source="<embedded default>", base_dir=Path.cwd())


def parse_config(
    data: Mapping[str, Any], *, source: str = "<config dict>", base_dir: Path | None = None
) -> HostConfig:
    """Validate the shape of a configuration mapping (as read from TOML)."""
    base = base_dir if base_dir is not None else Path.cwd()
    problems: list[ConfigProblem] = []
    if not isinstance(data, Mapping):
        raise ConfigError("expected a table (mapping) at the top level", file=source)
    data, plugin_problems = _substitute(data, source, problems)
    for key in data:
        if key not in _TOP_LEVEL:
            problems.append(
                ConfigProblem(
                    source,
                    None,
                    key,
                    f"unknown table; expected one of: {', '.join(f'[{t}]' for t in _TOP_LEVEL)}",
                )
            )

    def table(name: str) -> Mapping[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, Mapping):
            problems.append(
                ConfigProblem(source, None, name, f"expected a table, got {describe_value(value)}")
            )
            return {}
        return value

    host_table = table("host")
    host = structure_into(HostSettings, host_table, source, "host", problems)
    if not isinstance(host, HostSettings):
        host = HostSettings()
    disabled, plugin_tables = _plugins_index(table("plugins"), source, problems)
    capabilities = _capability_pins(table("capabilities"), source, problems)
    consumers = _consumer_pins(table("consumers"), source, problems)

    if problems:
        raise ConfigError(problems=problems)
    return HostConfig(
        source=source,
        base_dir=base,
        host=host,
        host_keys=frozenset(host_table),
        disabled=tuple(disabled),
        plugin_tables=plugin_tables,
        plugin_problems={k: tuple(v) for k, v in plugin_problems.items()},
        capabilities=capabilities,
        consumers=consumers,
    )


def _substitute(
    data: Mapping[str, Any], source: str, problems: list[ConfigProblem]
) -> tuple[dict[str, Any], dict[str, list[ConfigProblem]]]:
    """``data`` with ``${NAME}`` substituted, and the problems found in each plugin's table.

    A problem inside one ``[plugins.<name>]`` table belongs to that plugin (it alone fails,
    see ``validate_plugins``); everywhere else it is the host's and goes to ``problems``.
    """
    plugin_problems: dict[str, list[ConfigProblem]] = {}
    substituted: dict[str, Any] = {}
    for top, section in data.items():
        if top == "plugins" and isinstance(section, Mapping):
            tables: dict[str, Any] = {}
            for name, value in section.items():
                if isinstance(value, Mapping):
                    own: list[ConfigProblem] = []
                    tables[name] = substitute_env(value, source, f"plugins.{name}", own)
                    if own:
                        plugin_problems[str(name)] = own
                else:
                    tables[name] = substitute_env(value, source, "plugins", problems, str(name))
            substituted[top] = tables
        else:
            substituted[top] = substitute_env({top: section}, source, None, problems)[top]
    return substituted, plugin_problems


def _plugins_index(
    section: Mapping[str, Any], source: str, problems: list[ConfigProblem]
) -> tuple[list[str], dict[str, Mapping[str, Any]]]:
    """``[plugins]``: the ``disabled`` list, and each ``[plugins.<name>]`` table unchecked."""
    disabled: list[str] = []
    plugin_tables: dict[str, Mapping[str, Any]] = {}
    for key, value in section.items():
        if key == "disabled":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                disabled = [str(v) for v in value]
            else:
                problems.append(
                    ConfigProblem(
                        source,
                        "plugins",
                        "disabled",
                        f"expected a list of plugin names (strings), got {describe_value(value)}",
                    )
                )
        elif isinstance(value, Mapping):
            plugin_tables[key] = value
        else:
            problems.append(
                ConfigProblem(
                    source,
                    "plugins",
                    key,
                    f"expected a table [plugins.{key}] or 'disabled', got {describe_value(value)}",
                )
            )
    return disabled, plugin_tables


def _capability_pins(
    section: Mapping[str, Any], source: str, problems: list[ConfigProblem]
) -> dict[str, str]:
    """``[capabilities.<cap>] provider = "<plugin>"``: capability name -> provider name."""
    capabilities: dict[str, str] = {}
    for cap, value in section.items():
        where = f"capabilities.{cap}"
        if not isinstance(value, Mapping):
            problems.append(
                ConfigProblem(
                    source,
                    "capabilities",
                    cap,
                    f"expected a table [{where}], got {describe_value(value)}",
                )
            )
            continue
        for key, item in value.items():
            if key != "provider":
                problems.append(
                    ConfigProblem(source, where, key, "unknown key; expected: provider")
                )
            elif not isinstance(item, str) or not item:
                problems.append(
                    ConfigProblem(
                        source,
                        where,
                        key,
                        f"expected a plugin name (string), got {describe_value(item)}",
                    )
                )
            else:
                capabilities[cap] = str(item)
    return capabilities


def _consumer_pins(
    section: Mapping[str, Any], source: str, problems: list[ConfigProblem]
) -> dict[str, dict[str, str]]:
    """``[consumers.<consumer>] <cap> = "<plugin>"``: consumer -> capability -> provider."""
    consumers: dict[str, dict[str, str]] = {}
    for consumer, value in section.items():
        where = f"consumers.{consumer}"
        if not isinstance(value, Mapping):
            problems.append(
                ConfigProblem(
                    source,
                    "consumers",
                    consumer,
                    f"expected a table [{where}], got {describe_value(value)}",
                )
            )
            continue
        pins: dict[str, str] = {}
        for cap, item in value.items():
            if not isinstance(item, str) or not item:
                problems.append(
                    ConfigProblem(
                        source,
                        where,
                        cap,
                        f"expected a provider plugin name (string), got {describe_value(item)}",
                    )
                )
            else:
                pins[cap] = str(item)
        consumers[consumer] = pins
    return consumers


__all__ = [
    "BUILTIN_CONSUMERS",
    "DEFAULT_DATA_DIR",
    "HostConfig",
    "HostSettings",
    "LogLevel",
    "default_config",
    "parse_config",
]
