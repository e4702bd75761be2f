"""A fast read of the ``aalis.*`` entry points: only ``entry_points.txt`` files, no metadata.

``importlib_metadata.entry_points()`` builds a ``Distribution`` for every installed package
and parses every ``entry_points.txt``; importing it and running it cost about as much as the
rest of ``aalis plugins`` together in an environment with a few hundred packages
(docs/performance.md, start-up). The host needs two groups, so this reads the same files
the same way (every ``*.dist-info`` and ``*.egg-info`` folder of every ``sys.path``
directory, the first distribution of a name wins) and parses only files that mention
``aalis.``.

``scan`` returns None when ``sys.path`` holds something it does not read (a zip file or an
egg): the caller then asks ``importlib_metadata``, which reads everything.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Collection, Iterable
from typing import Any

_META_DIR = re.compile(r"(?P<name>.+?)(?:-(?P<version>[^-]+))?\.(?:dist-info|egg-info)")
_ENTRY = re.compile(r"(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[.*\])?\s*$")


class FoundDist:
    """The distribution folder an entry point comes from (``_path.name`` like a ``PathDistribution``)."""

    __slots__ = ("_path", "name", "version")

    def __init__(self, folder: str, name: str, version: str | None) -> None:
        self._path = _Folder(folder)
        self.name = name
        self.version = version


class _Folder:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class FoundEntryPoint:
    """An entry point read from ``entry_points.txt``: ``name``, ``value``, ``group``, ``dist``,
    and ``load()`` with ``importlib.metadata.EntryPoint``'s meaning (``module:attr.sub``)."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: FoundDist) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def load(self) -> Any:
        match = _ENTRY.match(self.value)
        if match is None:
            raise ValueError(f"invalid entry point value {self.value!r}")
        obj: Any = importlib.import_module(match["module"])
        for attr in (match["attr"] or "").split("."):
            if attr:
                obj = getattr(obj, attr)
        return obj

    def __repr__(self) -> str:
        return f"FoundEntryPoint({self.name!r}, {self.value!r}, {self.group!r})"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _parse(
    text: str, folder: str, dist: FoundDist, groups: Collection[str]
) -> Iterable[FoundEntryPoint]:
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        if group is None or group not in groups or "=" not in line:
            continue
        name, _, value = line.partition("=")
        yield FoundEntryPoint(name.strip(), value.strip(), group, dist)


def scan(paths: Iterable[str], groups: Collection[str]) -> dict[str, list[FoundEntryPoint]] | None:
    """Entry points of ``groups`` on ``paths`` (``sys.path``); None to fall back (see above)."""
    found: dict[str, list[FoundEntryPoint]] = {group: [] for group in groups}
    seen: set[str] = set()
    for entry in paths:
        directory = entry or "."
        try:
            names = sorted(os.listdir(directory))
        except NotADirectoryError:
            return None  # a zip on sys.path: leave it to importlib_metadata
        except OSError:
            continue  # missing or unreadable: importlib_metadata skips it too
        for folder in names:
            match = _META_DIR.fullmatch(folder)
            if match is None:
                continue
            path = os.path.join(directory, folder)
            if not os.path.isdir(path):
                return None  # a zipped egg or an .egg-info file
            key = _normalise(match["name"])
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as file:
                    text = file.read()
            except OSError:
                continue
            if "aalis." not in text:
                continue
            dist = FoundDist(folder, match["name"], match["version"])
            for ep in _parse(text, folder, dist, groups):
                found[ep.group].append(ep)
    return found


__all__ = ["FoundDist", "FoundEntryPoint", "scan"]
