"""What a configuration problem is, and the one error that reports them all.

``ConfigProblem`` locates one problem (file, table, key) and says what was expected;
``ConfigError`` carries every problem found in one pass, so a user fixes the whole file at once
instead of one typo per run. Both redact what they print (docs/host/redaction.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from aalis_core._errors import AalisError
from aalis_core._redaction import redact


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


__all__ = ["ConfigError", "ConfigProblem"]
