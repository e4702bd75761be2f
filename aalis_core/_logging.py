"""Structured logging for the host and its plugins, with credentials redacted.

Why structlog: every line carries the plugin that produced it (``plugin=<name>``), which is
what an operator needs when one of a dozen plugins misbehaves. Why redaction (the rules live
in ``aalis_core._redaction``) runs in the processor chain: plugins log URIs and exceptions that embed them (a MongoDB driver error
quotes the URI); filtering each call site by hand would miss one, a processor misses none.

Rendering: a console renderer when stderr is a terminal, JSON lines otherwise (log
collectors parse them), or whatever ``[host] log_format`` says. Logs go to stderr so that a
command's own output on stdout (``aalis plugins --json``) stays machine-readable.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from typing import IO, TYPE_CHECKING, Any, Literal, cast

from aalis_core._redaction import redact, redact_value

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

LogFormat = Literal["console", "json"]

LEVELS: dict[str, int] = {
    "debug": 10,
    "info": 20,
    "warning": 30,
    "error": 40,
    "critical": 50,
}


_DEBUG, _INFO, _WARNING, _ERROR, _CRITICAL = (
    LEVELS[name] for name in ("debug", "info", "warning", "error", "critical")
)


def redact_processor(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor that masks credentials in every value of the event dict.

    Host authors who configure structlog themselves should keep this processor in their
    chain (after ``format_exc_info``) so that tracebacks are masked too.
    """
    for key, value in list(event_dict.items()):
        event_dict[key] = redact_value(value)
    return event_dict


class _StderrLogger:
    """Writes each rendered line to the *current* ``sys.stderr``.

    Looking the stream up at write time (instead of binding it at configuration time) keeps
    logging correct when tests or embedding hosts swap ``sys.stderr``.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream

    def msg(self, message: str) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        stream.write(message + "\n")
        stream.flush()

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


_configured = False

#: The settings of a ``configure_logging`` call not yet handed to structlog: ``(level_no,
#: log_format, stream)``. Importing structlog costs tens of milliseconds (it pulls in its
#: console renderer, colorama and greenlet when installed), which every ``aalis`` command would
#: pay to print nothing at the default ``warning`` level. So the configuration waits until a
#: line passes the level or someone else imports structlog; ``_install_pending`` applies it.
_pending: tuple[int, LogFormat, IO[str] | None] | None = None


def configure_logging(
    level: str = "info",
    log_format: LogFormat | None = None,
    *,
    stream: IO[str] | None = None,
) -> None:
    """Install the structlog configuration used by the host and every plugin logger.

    ``log_format=None`` picks the console renderer when the stream is a terminal and JSON
    lines otherwise. ``stream`` defaults to the current ``sys.stderr`` at each write.
    Calling it again replaces the configuration (loggers are not cached, so existing
    bound loggers follow). structlog itself is configured at the first line that passes
    the level, or at once when it is already imported.
    """
    global _configured, _pending
    level_no = LEVELS.get(level.lower())
    if level_no is None:
        raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LEVELS)}")
    if log_format is None:
        target = stream if stream is not None else sys.stderr
        isatty = getattr(target, "isatty", None)
        log_format = "console" if callable(isatty) and isatty() else "json"
    if log_format not in ("json", "console"):
        raise ValueError(f"unknown log format {log_format!r}; expected 'console' or 'json'")
    _pending = (level_no, log_format, stream)
    _configured = True
    if "structlog" in sys.modules:
        _install_pending()


def _install_pending() -> None:
    """Hand the waiting ``configure_logging`` settings to structlog (once)."""
    global _pending
    settings, _pending = _pending, None
    if settings is None:
        return
    import structlog

    level_no, log_format, stream = settings
    renderer: Any
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False, default=str)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        logger_factory=lambda *_args: _StderrLogger(stream),
        cache_logger_on_first_use=False,
    )


def _filtered(level_no: int) -> bool:
    """True when a line at ``level_no`` would be dropped by a configuration still waiting.

    Only while structlog is not imported at all: once it is (the application's own
    configuration, ``structlog.testing.capture_logs``), structlog decides.
    """
    pending = _pending
    return pending is not None and level_no < pending[0] and "structlog" not in sys.modules


#: The level a process logs at when nothing configured logging (no ``[host] log_level``, no
#: ``configure_logging`` call, no structlog configuration of the application).
DEFAULT_LEVEL = "warning"


def default_level() -> str:
    """``$AALIS_LOG_LEVEL`` when it names a level, else ``warning``.

    Why not ``info``: a host is a library too. A script or a notebook that opens a
    ``SyncHost()`` should not get a line per started plugin on stderr; the CLI made the same
    choice. Warnings and errors (a plugin that failed) still print; ``[host] log_level =
    "info"`` or ``AALIS_LOG_LEVEL=info`` brings the routine lines back.
    """
    import os

    level = os.environ.get("AALIS_LOG_LEVEL", "").strip().lower()
    return level if level in LEVELS else DEFAULT_LEVEL


def is_configured() -> bool:
    """True once ``configure_logging`` ran in this process."""
    return _configured


_structlog_config: Any = None


def _current_config() -> Any:
    """structlog's configuration object (one mutable singleton; looked up once)."""
    global _structlog_config
    if _structlog_config is None:
        from structlog import _config

        _structlog_config = _config._CONFIG
    return _structlog_config


class _CachedLogger:
    """A bound logger that is built once per structlog configuration.

    structlog's lazy proxy rebuilds the bound logger on every call (tens of microseconds,
    even for a filtered ``debug``); plugins log on hot paths such as ``save_message``.
    Caching while the configuration objects stay the same keeps a filtered call at a few
    microseconds and still follows ``configure_logging`` (or
    ``structlog.testing.capture_logs``) done afterwards.
    """

    __slots__ = ("_bound", "_context", "_key")

    def __init__(self, context: dict[str, Any]) -> None:
        self._context = context
        self._bound: Any = None
        self._key: tuple[Any, ...] = ()

    def _logger(self) -> Any:
        if _pending is not None:
            _install_pending()
        cfg = _current_config()
        key = self._key
        if (
            self._bound is None
            or key[0] is not cfg.default_processors
            or key[1] is not cfg.default_wrapper_class
            or key[2] is not cfg.logger_factory
            or key[3] is not cfg.default_context_class
        ):
            import structlog

            self._key = (
                cfg.default_processors,
                cfg.default_wrapper_class,
                cfg.logger_factory,
                cfg.default_context_class,
            )
            self._bound = structlog.get_logger().bind(**self._context)
        return self._bound

    # The usual methods are spelled out: ``__getattr__`` alone costs a failed lookup per call.
    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_DEBUG):
            return None
        return self._logger().debug(event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_INFO):
            return None
        return self._logger().info(event, *args, **kw)

    def warning(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_WARNING):
            return None
        return self._logger().warning(event, *args, **kw)

    warn = warning

    def error(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_ERROR):
            return None
        return self._logger().error(event, *args, **kw)

    def exception(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_ERROR):
            return None
        return self._logger().exception(event, *args, **kw)

    def critical(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _filtered(_CRITICAL):
            return None
        return self._logger().critical(event, *args, **kw)

    def bind(self, **new_values: Any) -> Any:
        return self._logger().bind(**new_values)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger(), name)

    def __repr__(self) -> str:
        return f"<aalis logger {self._context!r}>"


def _configured_elsewhere() -> bool:
    """True when the application configured structlog itself (it imported it to do so)."""
    structlog = sys.modules.get("structlog")
    return structlog is not None and bool(structlog.is_configured())


def get_logger(plugin: str | None = None, **context: Any) -> FilteringBoundLogger:
    """Return a structlog logger bound to ``plugin=<name>`` (and any extra context).

    Installs the default configuration on first use unless structlog was configured by
    someone else (an embedding application keeps its own chain; see ``redact_processor``).
    ``bind()`` on it returns a plain structlog bound logger.
    """
    if not _configured and not _configured_elsewhere():
        configure_logging(default_level())
    if plugin is not None:
        context = {"plugin": plugin, **context}
    return cast("FilteringBoundLogger", _CachedLogger(context))


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "LogFormat",
    "configure_logging",
    "default_level",
    "get_logger",
    "is_configured",
    "redact",
    "redact_processor",
    "redact_value",
]
