"""``${NAME}`` in ``aalis.toml``: environment variables substituted before validation.

Substitution runs on the raw TOML values, before any table is checked, so a value from the
environment is validated like a value written in the file. A substituted string is an
``EnvStr``: it remembers which variables it came from, so messages name ``${NAME}`` instead of
printing the value (usually a secret), and a whole-value reference such as ``"${PORT}"`` may
fill an int, float or bool setting (the converter reads it). ``$${`` writes a literal ``${``.
Problems (an unset variable, a malformed reference) are recorded, not raised: the caller
decides whose problem they are (docs/host/configuration.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from aalis_core._config.errors import ConfigProblem

_ENV_REF = re.compile(r"\$(\$?)\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class EnvStr(str):
    """A string that came (at least partly) from environment variables.

    Error messages never print its value (it is usually a secret), and a whole-value
    reference like ``"${PORT}"`` may fill an int, float or bool setting.
    """

    env_names: tuple[str, ...] = ()
    whole: bool = False


def substitute_env(
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
                out_table[k] = substitute_env(v, source, sub, problems)
            else:
                out_table[k] = substitute_env(v, source, table, problems, str(k))
        return out_table
    if isinstance(value, list):
        return [substitute_env(v, source, table, problems, key) for v in value]
    return value


__all__ = ["EnvStr", "substitute_env"]
