"""Reading ``aalis.toml``: the file, its encoding and TOML syntax, then ``parse_config``.

``tomllib`` is imported when a file is read: the embedded default (no ``aalis.toml``) runs
every ``aalis`` command without it.
"""

from __future__ import annotations

import os
from pathlib import Path

from aalis_core._config.errors import ConfigError
from aalis_core._config.host_tables import HostConfig, parse_config


def load_config(path: str | os.PathLike[str]) -> HostConfig:
    """Read and validate the shape of a TOML config file."""
    import tomllib

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


__all__ = ["load_config"]
