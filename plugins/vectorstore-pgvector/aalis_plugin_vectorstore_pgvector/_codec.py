"""Values to columns: text that PostgreSQL's ``text`` can hold, vectors as pgvector literals.

Text columns hold any string: U+0000 (which PostgreSQL's ``text`` refuses) is escaped by an
order-preserving code (``\\x00`` -> ``\\x01\\x01``, ``\\x01`` -> ``\\x01\\x02``), so
equality and ``ORDER BY`` under ``COLLATE "C"`` work on the stored form. A lone surrogate
(which UTF-8 cannot carry) is refused with the field's name.
"""

from __future__ import annotations

from collections.abc import Sequence


def escape(value: str) -> str:
    if "\x00" not in value and "\x01" not in value:
        return value
    return value.replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")


def unescape(value: str) -> str:
    if "\x01" not in value:
        return value
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\x01":
            out.append("\x00" if next(chars, "\x02") == "\x01" else "\x01")
        else:
            out.append(char)
    return "".join(out)


def escape_optional(value: str | None) -> str | None:
    return None if value is None else escape(value)


def check_text(value: str | None, what: str) -> None:
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not valid text: lone surrogate at index {exc.start}") from None


def vector_literal(row: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(value)) for value in row) + "]"


__all__ = ["check_text", "escape", "escape_optional", "unescape", "vector_literal"]
