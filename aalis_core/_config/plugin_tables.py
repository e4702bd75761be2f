"""Step two: every ``[plugins.<name>]`` table and every provider/consumer name, checked
against the plugins discovery found.

A plugin's table is structured into its ``Config`` by the converter; a problem there fails
that plugin alone (``PluginConfigs.invalid``), while a name that matches no installed plugin
is the whole file's problem (``ConfigError``): the user meant something that is not there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aalis_core._config.converter import FAILED, required_keys, structure_into
from aalis_core._config.errors import ConfigError, ConfigProblem
from aalis_core._config.host_tables import BUILTIN_CONSUMERS, HostConfig
from aalis_core._redaction import redact


@attrs.frozen
class PluginSchema:
    """What config validation needs to know about one installed plugin.

    ``loaded`` is False for plugins that are installed but were not imported (disabled,
    filtered out, or failing at import): their tables are accepted unchecked, since their
    ``Config`` class is unknown and the plugin will not run anyway.
    """

    name: str
    loaded: bool = False
    config_class: type[Any] | None = None
    provides: frozenset[str] = frozenset()
    consumes: frozenset[str] = frozenset()


@attrs.frozen
class PluginConfigs:
    """Result of ``validate_plugins``: config objects, and plugins left unconfigured."""

    configs: Mapping[str, Any]
    #: plugin name -> why it cannot run without a table (a required key has no default)
    unconfigured: Mapping[str, str]
    #: plugin name -> its ``Config`` class itself is broken (a plugin bug, not a user error)
    broken: Mapping[str, str] = attrs.field(factory=dict)
    #: plugin name -> what is wrong in its ``[plugins.<name>]`` table (that plugin alone fails)
    invalid: Mapping[str, tuple[ConfigProblem, ...]] = attrs.field(factory=dict)


def validate_plugins(config: HostConfig, plugins: Mapping[str, PluginSchema]) -> PluginConfigs:
    """Check every plugin table and every provider/consumer name against the plugins.

    Raises ``ConfigError`` listing every problem. A loaded plugin with no table whose
    ``Config`` has required keys is not an error: it is reported as unconfigured (the host
    marks it ``disabled``), so installing an optional backend never breaks a working setup.
    A ``Config`` class that crashes (not an attrs class, a post-init raising something other
    than ``ValueError``/``TypeError``) is that plugin's bug: it is reported in ``broken``
    and the host marks only that plugin ``error``.
    """
    problems: list[ConfigProblem] = []
    installed = ", ".join(sorted(plugins)) or "none"
    configs: dict[str, Any] = {}
    unconfigured: dict[str, str] = {}
    broken: dict[str, str] = {}
    invalid: dict[str, tuple[ConfigProblem, ...]] = {}

    for name in config.plugin_tables:
        if name not in plugins:
            problems.append(
                config.problem(
                    f"plugins.{name}",
                    None,
                    f"no installed plugin is named {name!r}; installed plugins: {installed}",
                )
            )

    for name in config.disabled:
        if name not in plugins:
            problems.append(
                config.problem(
                    "plugins",
                    "disabled",
                    f"no installed plugin is named {name!r}; installed plugins: {installed}",
                )
            )

    for name, schema in plugins.items():
        if not schema.loaded:
            continue
        given = config.plugin_tables.get(name)
        where = f"plugins.{name}"
        own = list(config.plugin_problems.get(name, ()))
        if schema.config_class is None:
            for key in given or {}:
                own.append(
                    config.problem(where, key, f"unknown key; plugin {name!r} takes no settings")
                )
            if own:
                invalid[name] = tuple(own)
            else:
                configs[name] = None
            continue
        if given is None:
            missing = required_keys(schema.config_class)
            if missing:
                unconfigured[name] = (
                    f"not configured: [{where}] needs {', '.join(repr(k) for k in missing)}"
                )
                continue
            given = {}
        if own:  # a ${NAME} that could not be substituted: the values are not the user's
            invalid[name] = tuple(own)
            continue
        try:
            value = structure_into(schema.config_class, given, config.source, where, own)
        except Exception as exc:  # the plugin's Config code crashed: that plugin fails alone
            text = " ".join(str(exc).split())
            broken[name] = redact(f"config failed: {type(exc).__name__}: {text}")
            continue
        if own:
            invalid[name] = tuple(own)
        elif value is not FAILED:
            configs[name] = value

    def check_provider(table: str, key: str, cap: str, provider: str) -> None:
        schema = plugins.get(provider)
        if schema is None:
            problems.append(
                config.problem(
                    table,
                    key,
                    f"no installed plugin is named {provider!r}; installed plugins: {installed}",
                )
            )
        elif schema.loaded and cap not in schema.provides:
            offered = ", ".join(sorted(schema.provides)) or "nothing"
            problems.append(
                config.problem(
                    table,
                    key,
                    f"plugin {provider!r} does not provide capability {cap!r} "
                    f"(it provides: {offered})",
                )
            )

    for cap, provider in config.capabilities.items():
        check_provider(f"capabilities.{cap}", "provider", cap, provider)
    for consumer, pins in config.consumers.items():
        where = f"consumers.{consumer}"
        consumer_schema = plugins.get(consumer)
        if consumer_schema is None and consumer not in BUILTIN_CONSUMERS:
            known = ", ".join([*BUILTIN_CONSUMERS, *sorted(plugins)])
            problems.append(
                config.problem(
                    "consumers",
                    consumer,
                    f"no consumer is named {consumer!r}; expected one of: {known}",
                )
            )
            continue
        for cap, provider in pins.items():
            if (
                consumer_schema is not None
                and consumer_schema.loaded
                and cap not in consumer_schema.consumes
            ):
                used = ", ".join(sorted(consumer_schema.consumes)) or "nothing"
                problems.append(
                    config.problem(
                        where,
                        cap,
                        f"plugin {consumer!r} does not use capability {cap!r} (it uses: {used})",
                    )
                )
                continue
            check_provider(where, cap, cap, provider)

    if problems:
        raise ConfigError(problems=problems)
    return PluginConfigs(configs=configs, unconfigured=unconfigured, broken=broken, invalid=invalid)


__all__ = ["PluginConfigs", "PluginSchema", "validate_plugins"]
