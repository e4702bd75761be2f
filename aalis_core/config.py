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

``structure(cls, table)`` is the small typed converter used for both: it turns TOML values
into an attrs class by its annotations (str, int, float, bool, Literal, Optional, lists,
tuples, dicts, Path, Enum and nested attrs classes) and runs the attrs validators.
"""

from __future__ import annotations

import enum
import os
import re
import tomllib
import types
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any, Literal

import attrs

from aalis_core.errors import AalisError
from aalis_core.redaction import is_secret_key, redact

DEFAULT_DATA_DIR = ".aalis"
#: Consumer names that are not plugins (docs/host/providers.md).
BUILTIN_CONSUMERS = ("host", "cli")
_TOP_LEVEL = ("host", "plugins", "capabilities", "consumers")
_ENV_REF = re.compile(r"\$(\$?)\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@attrs.frozen
class ConfigProblem:
    """One thing wrong with a configuration: where, and what was expected."""

    file: str
    table: str | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.table:
            where += f": [{self.table}]"
        if self.key:
            where += f" key {self.key!r}"
        return redact(f"{where}: {self.message}")


class ConfigError(AalisError, ValueError):
    """The configuration is invalid; nothing was started.

    ``problems`` lists every problem found; ``file``, ``table``, ``key`` and ``expected``
    describe the first one. ``str(error)`` is one line (CLI output), naming all of them.
    """

    def __init__(
        self,
        message: str = "",
        *,
        file: str = "<config>",
        table: str | None = None,
        key: str | None = None,
        expected: str | None = None,
        problems: Sequence[ConfigProblem] = (),
    ) -> None:
        if not problems:
            text = message or (f"expected {expected}" if expected else "invalid configuration")
            problems = [ConfigProblem(file, table, key, text)]
        self.problems: list[ConfigProblem] = list(problems)
        first = self.problems[0]
        self.file = first.file
        self.table = first.table
        self.key = first.key
        self.expected = expected
        text = str(first)
        if len(self.problems) > 1:
            more = "; ".join(str(p) for p in self.problems[1:])
            text += f" (and {len(self.problems) - 1} more: {more})"
        super().__init__(text)


# --------------------------------------------------------------------------------------------
# The parsed configuration
# --------------------------------------------------------------------------------------------

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


def load_config(path: str | os.PathLike[str]) -> HostConfig:
    """Read and validate the shape of a TOML config file."""
    file = Path(path)
    source = str(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError("file not found", file=source) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=source) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", file=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=source) from None
    return parse_config(data, source=source, base_dir=file.resolve().parent)


def parse_config(
    data: Mapping[str, Any], *, source: str = "<config dict>", base_dir: Path | None = None
) -> HostConfig:
    """Validate the shape of a configuration mapping (as read from TOML)."""
    base = base_dir if base_dir is not None else Path.cwd()
    problems: list[ConfigProblem] = []
    if not isinstance(data, Mapping):
        raise ConfigError("expected a table (mapping) at the top level", file=source)
    # ``${NAME}`` problems inside one plugin's table belong to that plugin (it alone fails,
    # see validate_plugins); everywhere else they are the host's and stop everything.
    plugin_problems: dict[str, list[ConfigProblem]] = {}
    substituted: dict[str, Any] = {}
    for top, section in data.items():
        if top == "plugins" and isinstance(section, Mapping):
            tables: dict[str, Any] = {}
            for name, value in section.items():
                if isinstance(value, Mapping):
                    own: list[ConfigProblem] = []
                    tables[name] = _substitute_env(value, source, f"plugins.{name}", own)
                    if own:
                        plugin_problems[str(name)] = own
                else:
                    tables[name] = _substitute_env(value, source, "plugins", problems, str(name))
            substituted[top] = tables
        else:
            substituted[top] = _substitute_env({top: section}, source, None, problems)[top]
    data = substituted
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
                ConfigProblem(source, None, name, f"expected a table, got {_describe_value(value)}")
            )
            return {}
        return value

    host_table = table("host")
    host = _structure_into(HostSettings, host_table, source, "host", problems)
    if not isinstance(host, HostSettings):
        host = HostSettings()

    disabled: list[str] = []
    plugin_tables: dict[str, Mapping[str, Any]] = {}
    for key, value in table("plugins").items():
        if key == "disabled":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                disabled = [str(v) for v in value]
            else:
                problems.append(
                    ConfigProblem(
                        source,
                        "plugins",
                        "disabled",
                        f"expected a list of plugin names (strings), got {_describe_value(value)}",
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
                    f"expected a table [plugins.{key}] or 'disabled', got {_describe_value(value)}",
                )
            )

    capabilities: dict[str, str] = {}
    for cap, value in table("capabilities").items():
        where = f"capabilities.{cap}"
        if not isinstance(value, Mapping):
            problems.append(
                ConfigProblem(
                    source,
                    "capabilities",
                    cap,
                    f"expected a table [{where}], got {_describe_value(value)}",
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
                        f"expected a plugin name (string), got {_describe_value(item)}",
                    )
                )
            else:
                capabilities[cap] = str(item)

    consumers: dict[str, dict[str, str]] = {}
    for consumer, value in table("consumers").items():
        where = f"consumers.{consumer}"
        if not isinstance(value, Mapping):
            problems.append(
                ConfigProblem(
                    source,
                    "consumers",
                    consumer,
                    f"expected a table [{where}], got {_describe_value(value)}",
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
                        f"expected a provider plugin name (string), got {_describe_value(item)}",
                    )
                )
            else:
                pins[cap] = str(item)
        consumers[consumer] = pins

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
            missing = _required_keys(schema.config_class)
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
            value = _structure_into(schema.config_class, given, config.source, where, own)
        except Exception as exc:  # the plugin's Config code crashed: that plugin fails alone
            text = " ".join(str(exc).split())
            broken[name] = redact(f"config failed: {type(exc).__name__}: {text}")
            continue
        if own:
            invalid[name] = tuple(own)
        elif value is not _FAILED:
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


# --------------------------------------------------------------------------------------------
# Environment substitution
# --------------------------------------------------------------------------------------------


class EnvStr(str):
    """A string that came (at least partly) from environment variables.

    Error messages never print its value (it is usually a secret), and a whole-value
    reference like ``"${PORT}"`` may fill an int, float or bool setting.
    """

    env_names: tuple[str, ...] = ()
    whole: bool = False


def _substitute_env(
    value: Any,
    source: str,
    table: str | None,
    problems: list[ConfigProblem],
    key: str | None = None,
) -> Any:
    """Replace ``${NAME}`` in every string (``$${`` escapes a literal ``${``)."""
    if isinstance(value, str):
        if "${" not in value:
            return value
        names: list[str] = []

        def replace(match: re.Match[str]) -> str:
            if match.group(1):
                return "${" + match.group(2) + "}"
            name = match.group(2)
            if not _ENV_NAME.match(name):
                problems.append(
                    ConfigProblem(
                        source,
                        table,
                        key,
                        f"invalid environment reference ${{{name}}}; expected ${{NAME}}",
                    )
                )
                return ""
            names.append(name)
            env = os.environ.get(name)
            if env is None:
                problems.append(
                    ConfigProblem(
                        source,
                        table,
                        key,
                        f"environment variable {name} is not set (referenced as ${{{name}}})",
                    )
                )
                return ""
            return env

        leftover = _ENV_REF.sub("", value).replace("$${", "")
        if "${" in leftover:
            start = leftover[leftover.index("${") + 2 :]
            name = re.match(r"[A-Za-z0-9_]{0,40}", start)
            shown = name.group(0) if name else ""
            problems.append(
                ConfigProblem(
                    source,
                    table,
                    key,
                    f"unterminated environment reference ${{{shown} (no closing brace); "
                    "expected ${NAME}, or $${ for a literal ${",
                )
            )
            return ""
        result = _ENV_REF.sub(replace, value)
        if not names:
            return result
        out = EnvStr(result)
        out.env_names = tuple(names)
        out.whole = _ENV_REF.fullmatch(value) is not None
        return out
    if isinstance(value, Mapping):
        out_table: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(v, Mapping):
                sub = f"{table}.{k}" if table else str(k)
                out_table[k] = _substitute_env(v, source, sub, problems)
            else:
                out_table[k] = _substitute_env(v, source, table, problems, str(k))
        return out_table
    if isinstance(value, list):
        return [_substitute_env(v, source, table, problems, key) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# The typed converter: TOML values -> attrs classes
# --------------------------------------------------------------------------------------------


class _Mismatch(Exception):
    """A leaf value does not fit the annotation; carries what was expected."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


class _NestedFailed(Exception):
    """A nested table failed; its problems are already recorded."""


_FAILED: Any = object()
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def structure(
    cls: type[Any], table: Mapping[str, Any], *, source: str = "<config>", table_name: str = ""
) -> Any:
    """Build an attrs ``cls`` from a TOML table, raising ``ConfigError`` on any problem.

    Plugin authors can use it in tests to check that their ``Config`` accepts the tables
    they document.
    """
    problems: list[ConfigProblem] = []
    value = _structure_into(cls, table, source, table_name or None, problems)
    if problems:
        raise ConfigError(problems=problems)
    return value


def _type_hints(cls: type[Any]) -> dict[str, Any]:
    """Resolved annotations of an attrs class; unresolvable ones are left out (-> Any).

    Falls back to resolving field by field, so one exotic forward reference does not
    leave the whole table unchecked; what still cannot be resolved is logged.
    """
    try:
        return typing.get_type_hints(cls)
    except Exception:
        pass
    import sys

    module = sys.modules.get(cls.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    namespace.setdefault("typing", typing)
    hints: dict[str, Any] = {}
    for field in attrs.fields(cls):
        annotation = field.type
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace, dict(vars(cls)))
            except Exception:
                from aalis_core.logging import get_logger

                get_logger(None, component="config").warning(
                    "config annotation not resolvable; value not type-checked",
                    config_class=cls.__qualname__,
                    field=field.name,
                    annotation=field.type,
                )
                continue
        hints[field.name] = annotation
    return hints


def _field_key(field: attrs.Attribute[Any]) -> str:
    alias = getattr(field, "alias", None)
    return alias if isinstance(alias, str) and alias else field.name


def _required_keys(cls: type[Any]) -> list[str]:
    if not attrs.has(cls):
        return []
    return [_field_key(f) for f in attrs.fields(cls) if f.init and f.default is attrs.NOTHING]


def _structure_into(
    cls: type[Any],
    table: Mapping[str, Any],
    source: str,
    table_name: str | None,
    problems: list[ConfigProblem],
) -> Any:
    """Convert ``table`` into ``cls``; record problems and return ``_FAILED`` on failure."""
    if not attrs.has(cls):
        raise TypeError(f"{cls!r} is not an attrs class; a plugin's Config must be one")
    hints = _type_hints(cls)
    fields = {_field_key(f): f for f in attrs.fields(cls) if f.init}
    start = len(problems)

    for key in table:
        if key not in fields:
            expected = ", ".join(fields) or "no keys"
            problems.append(
                ConfigProblem(
                    source, table_name, str(key), f"unknown key; expected one of: {expected}"
                )
            )

    kwargs: dict[str, Any] = {}
    for key, field in fields.items():
        if key not in table:
            if field.default is attrs.NOTHING:
                tp = hints.get(field.name, field.type)
                problems.append(
                    ConfigProblem(
                        source,
                        table_name,
                        key,
                        f"missing required key; expected {_describe_type(tp)}",
                    )
                )
            continue
        raw = table[key]
        if field.converter is not None:
            kwargs[key] = raw
            continue
        tp = hints.get(field.name, field.type)
        if isinstance(tp, str) or tp is None:
            tp = Any
        try:
            value = _convert(raw, tp, source, table_name, key, problems)
        except _Mismatch as exc:
            got = _describe_value(raw, secret=is_secret_key(key))
            problems.append(
                ConfigProblem(source, table_name, key, f"expected {exc.expected}, got {got}")
            )
            continue
        except _NestedFailed:
            continue
        if field.validator is not None:
            try:
                field.validator(None, field, value)
            except (ValueError, TypeError) as exc:
                if is_secret_key(key):
                    # A secret under the wrong key is still a secret: name the key only.
                    reason = _without_value(_exc_text(exc), raw)
                    message = f"invalid value ({_describe_value(raw, secret=True)}): {reason}"
                else:
                    message = f"invalid value {_describe_value(raw)}: {_exc_text(exc)}"
                problems.append(ConfigProblem(source, table_name, key, message))
                continue
            except Exception:  # a validator that needs the instance: checked on construction
                pass
        kwargs[key] = value

    if len(problems) > start:
        return _FAILED
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        problems.append(
            ConfigProblem(source, table_name, None, f"invalid settings: {_exc_text(exc)}")
        )
        return _FAILED


def _exc_text(exc: BaseException) -> str:
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc) or type(exc).__name__


def _convert(
    value: Any,
    tp: Any,
    source: str,
    table_name: str | None,
    key: str,
    problems: list[ConfigProblem],
) -> Any:
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _convert(value, args[0], source, table_name, key, problems)
    if tp is type(None):
        if value is None:
            return None
        raise _Mismatch("nothing (None)")
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        for option in options:
            try:
                return _convert(value, option, source, table_name, key, problems)
            except _Mismatch:
                continue
        raise _Mismatch(" or ".join(_describe_type(o) for o in options))
    if origin is Literal:
        for option in args:
            if type(value) is type(option) and value == option:
                return value
            if isinstance(value, EnvStr) and isinstance(option, str) and str(value) == option:
                return option
        raise _Mismatch("one of " + ", ".join(_toml_literal(a) for a in args))
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, EnvStr) and value.whole:
            text = value.strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
        raise _Mismatch("true or false")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, EnvStr) and value.whole:
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise _Mismatch("an integer")
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, EnvStr) and value.whole:
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise _Mismatch("a number")
    if tp is str:
        if isinstance(value, str):
            return str(value)
        raise _Mismatch("a string")
    if isinstance(tp, type) and issubclass(tp, PurePath):
        if isinstance(value, str | PurePath):
            return tp(str(value))
        raise _Mismatch("a path (string)")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if value == member.value or (isinstance(value, str) and value == member.name):
                return member
        raise _Mismatch("one of " + ", ".join(_toml_literal(m.value) for m in tp))
    if isinstance(tp, type) and attrs.has(tp):
        if not isinstance(value, Mapping):
            raise _Mismatch("a table")
        sub = f"{table_name}.{key}" if table_name else key
        result = _structure_into(tp, value, source, sub, problems)
        if result is _FAILED:
            raise _NestedFailed
        return result
    container = origin if origin is not None else tp
    if container in (list, tuple, set, frozenset, Sequence, Collection, typing.Sequence) or (
        isinstance(container, type)
        and issubclass(container, Sequence | typing.AbstractSet)
        and not issubclass(container, str)
    ):
        if not isinstance(value, list | tuple) and not (
            container in (set, frozenset) and isinstance(value, set | frozenset)
        ):
            raise _Mismatch(_describe_type(tp))
        if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise _Mismatch(_describe_type(tp))
            return tuple(
                _convert_item(v, a, source, table_name, f"{key}[{i}]", problems)
                for i, (v, a) in enumerate(zip(value, args, strict=True))
            )
        item_tp = args[0] if args else Any
        items = [
            _convert_item(v, item_tp, source, table_name, f"{key}[{i}]", problems)
            for i, v in enumerate(value)
        ]
        if container in (tuple, Sequence, typing.Sequence, Collection):
            return tuple(items) if container is tuple else items
        if container is frozenset:
            return frozenset(items)
        if container is set:
            return set(items)
        return items
    if container in (dict, Mapping, typing.Mapping) or (
        isinstance(container, type) and issubclass(container, Mapping)
    ):
        if not isinstance(value, Mapping):
            raise _Mismatch(_describe_type(tp))
        value_tp = args[1] if len(args) == 2 else Any
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Mismatch(_describe_type(tp))
            out[k] = _convert_item(
                v, value_tp, source, table_name, f"{key}.{k}", problems, nested_table=True
            )
        return out
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _Mismatch(_describe_type(tp))
    return value  # an annotation this converter does not know: attrs validators decide


def _convert_item(
    value: Any,
    tp: Any,
    source: str,
    table_name: str | None,
    key: str,
    problems: list[ConfigProblem],
    *,
    nested_table: bool = False,
) -> Any:
    """Convert one element of a container, reporting a mismatch at its own position."""
    try:
        return _convert(value, tp, source, table_name, key, problems)
    except _Mismatch as exc:
        problems.append(
            ConfigProblem(
                source, table_name, key, f"expected {exc.expected}, got {_describe_value(value)}"
            )
        )
        raise _NestedFailed from None


def _toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _describe_type(tp: Any) -> str:
    if tp is Any or tp is object:
        return "any value"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _describe_type(args[0])
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(_describe_type(a) for a in args if a is not type(None))
    if origin is Literal:
        return "one of " + ", ".join(_toml_literal(a) for a in args)
    simple = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if tp in simple:
        return simple[tp]
    if isinstance(tp, type) and issubclass(tp, PurePath):
        return "a path (string)"
    if isinstance(tp, type) and attrs.has(tp):
        return "a table"
    container = origin if origin is not None else tp
    if container in (dict, Mapping, typing.Mapping):
        inner = _describe_type(args[1]) if len(args) == 2 else "any value"
        return f"a table of {inner}"
    if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return f"a list of {len(args)} items"
    if container in (list, tuple, set, frozenset, Sequence, typing.Sequence, Collection):
        inner = _describe_type(args[0]) if args else "any value"
        return f"a list of {_plural(inner)}"
    return getattr(tp, "__name__", str(tp))


def _plural(description: str) -> str:
    for article in ("an ", "a "):
        if description.startswith(article):
            return description[len(article) :] + "s"
    return description


def _without_value(text: str, value: Any) -> str:
    """``text`` with every literal rendering of ``value`` replaced by ``***``."""
    if isinstance(value, str) and value:
        for shown in sorted({repr(value), repr(str(value)), str(value)}, key=len, reverse=True):
            text = text.replace(shown, "***")
    return text


def _describe_value(value: Any, *, secret: bool = False) -> str:
    """How a refused value is named in a message; ``secret`` names only its kind."""
    if secret and isinstance(value, str):
        return "a string" if not isinstance(value, EnvStr) else _describe_value(value)
    if isinstance(value, EnvStr):
        refs = ", ".join(f"${{{n}}}" for n in value.env_names)
        return f"a string from {refs}"
    if isinstance(value, bool):
        return f"boolean {_toml_literal(value)}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {redact(repr(shown))}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    if value is None:
        return "nothing (None)"
    return type(value).__name__


__all__ = [
    "BUILTIN_CONSUMERS",
    "DEFAULT_DATA_DIR",
    "ConfigError",
    "ConfigProblem",
    "EnvStr",
    "HostConfig",
    "HostSettings",
    "PluginConfigs",
    "PluginSchema",
    "default_config",
    "load_config",
    "parse_config",
    "structure",
    "validate_plugins",
]
