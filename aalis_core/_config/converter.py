"""The typed converter: a TOML table into an attrs class, every problem collected.

``structure(cls, table)`` turns TOML values into an attrs class by its annotations (str, int,
float, bool, Literal, Optional, lists, tuples, dicts, Path, Enum and nested attrs classes) and
runs the attrs validators. It validates ``[host]`` (``HostSettings``) and every plugin's
``[plugins.<name>]`` table (the plugin's ``Config``) alike.

Why a converter of our own rather than cattrs (docs/host/configuration-internals.md): the
messages are the product. Each problem names file, table and key, says what was expected in
TOML words, never prints a secret, reads ``"${PORT}"`` as an int, and ALL problems of the file
come back in one pass; that is most of this module, and with cattrs it would be a formatter
over its exception groups of the same size plus a dependency.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal

import attrs

from aalis_core._config.describe import describe_type, describe_value, toml_literal, without_value
from aalis_core._config.errors import ConfigError, ConfigProblem
from aalis_core._config.interpolation import EnvStr
from aalis_core._redaction import is_secret_key


class _Mismatch(Exception):
    """A leaf value does not fit the annotation; carries what was expected."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


class _NestedFailed(Exception):
    """A nested table failed; its problems are already recorded."""


FAILED: Any = object()
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
    value = structure_into(cls, table, source, table_name or None, problems)
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
                from aalis_core._logging import get_logger

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


def required_keys(cls: type[Any]) -> list[str]:
    if not attrs.has(cls):
        return []
    return [_field_key(f) for f in attrs.fields(cls) if f.init and f.default is attrs.NOTHING]


def structure_into(
    cls: type[Any],
    table: Mapping[str, Any],
    source: str,
    table_name: str | None,
    problems: list[ConfigProblem],
) -> Any:
    """Convert ``table`` into ``cls``; record problems and return ``FAILED`` on failure."""
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
                        f"missing required key; expected {describe_type(tp)}",
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
            got = describe_value(raw, secret=is_secret_key(key))
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
                    reason = without_value(_exc_text(exc), raw)
                    message = f"invalid value ({describe_value(raw, secret=True)}): {reason}"
                else:
                    message = f"invalid value {describe_value(raw)}: {_exc_text(exc)}"
                problems.append(ConfigProblem(source, table_name, key, message))
                continue
            except Exception:  # a validator that needs the instance: checked on construction
                pass
        kwargs[key] = value

    if len(problems) > start:
        return FAILED
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        problems.append(
            ConfigProblem(source, table_name, None, f"invalid settings: {_exc_text(exc)}")
        )
        return FAILED


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
        raise _Mismatch(" or ".join(describe_type(o) for o in options))
    if origin is Literal:
        for option in args:
            if type(value) is type(option) and value == option:
                return value
            if isinstance(value, EnvStr) and isinstance(option, str) and str(value) == option:
                return option
        raise _Mismatch("one of " + ", ".join(toml_literal(a) for a in args))
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
        raise _Mismatch("one of " + ", ".join(toml_literal(m.value) for m in tp))
    if isinstance(tp, type) and attrs.has(tp):
        if not isinstance(value, Mapping):
            raise _Mismatch("a table")
        sub = f"{table_name}.{key}" if table_name else key
        result = structure_into(tp, value, source, sub, problems)
        if result is FAILED:
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
            raise _Mismatch(describe_type(tp))
        if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise _Mismatch(describe_type(tp))
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
            raise _Mismatch(describe_type(tp))
        value_tp = args[1] if len(args) == 2 else Any
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Mismatch(describe_type(tp))
            out[k] = _convert_item(
                v, value_tp, source, table_name, f"{key}.{k}", problems, nested_table=True
            )
        return out
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _Mismatch(describe_type(tp))
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
                source, table_name, key, f"expected {exc.expected}, got {describe_value(value)}"
            )
        )
        raise _NestedFailed from None


__all__ = ["FAILED", "required_keys", "structure", "structure_into"]
