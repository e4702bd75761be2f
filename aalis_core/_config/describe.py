"""How a type and a refused value are named in a configuration message.

One place for the wording ("expected an integer, got string 'x'"), shared by the converter
and the host's own table checks so every message reads the same. A value under a secret key,
or one that came from the environment, is named by its kind only, never printed.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal

import attrs

from aalis_core._config.interpolation import EnvStr
from aalis_core._redaction import redact


def toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def describe_type(tp: Any) -> str:
    if tp is Any or tp is object:
        return "any value"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return describe_type(args[0])
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(describe_type(a) for a in args if a is not type(None))
    if origin is Literal:
        return "one of " + ", ".join(toml_literal(a) for a in args)
    simple = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if tp in simple:
        return simple[tp]
    if isinstance(tp, type) and issubclass(tp, PurePath):
        return "a path (string)"
    if isinstance(tp, type) and attrs.has(tp):
        return "a table"
    container = origin if origin is not None else tp
    if container in (dict, Mapping, typing.Mapping):
        inner = describe_type(args[1]) if len(args) == 2 else "any value"
        return f"a table of {inner}"
    if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return f"a list of {len(args)} items"
    if container in (list, tuple, set, frozenset, Sequence, typing.Sequence, Collection):
        inner = describe_type(args[0]) if args else "any value"
        return f"a list of {_plural(inner)}"
    return getattr(tp, "__name__", str(tp))


def _plural(description: str) -> str:
    for article in ("an ", "a "):
        if description.startswith(article):
            return description[len(article) :] + "s"
    return description


def without_value(text: str, value: Any) -> str:
    """``text`` with every literal rendering of ``value`` replaced by ``***``."""
    if isinstance(value, str) and value:
        for shown in sorted({repr(value), repr(str(value)), str(value)}, key=len, reverse=True):
            text = text.replace(shown, "***")
    return text


def describe_value(value: Any, *, secret: bool = False) -> str:
    """How a refused value is named in a message; ``secret`` names only its kind."""
    if secret and isinstance(value, str):
        return "a string" if not isinstance(value, EnvStr) else describe_value(value)
    if isinstance(value, EnvStr):
        refs = ", ".join(f"${{{n}}}" for n in value.env_names)
        return f"a string from {refs}"
    if isinstance(value, bool):
        return f"boolean {toml_literal(value)}"
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


__all__ = ["describe_type", "describe_value", "toml_literal", "without_value"]
