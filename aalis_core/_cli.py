"""The ``aalis`` command line (click).

``aalis_core`` owns only ``init`` and ``plugins``; every other command joins through the
``register_commands(cli)`` hookspec, the way simonw/llm's plugins add commands. That hook
is called through the host the command will run on (``Host.add_commands``: one discovery,
the same configuration checks) on every plugin it loaded, *without starting it*, so
``aalis --help`` never opens a database; the same host then runs the command.

Commands that need a running host use ``open_host()`` (consumer name ``cli``) and
``run_async()``, which turns any exception into one line on stderr and exit code 1:
a user typing a wrong session id should read a sentence, not a traceback. Set
``AALIS_DEBUG=1`` to get the traceback anyway.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from aalis_core._capability import CapabilityAbsent

if TYPE_CHECKING:
    from aalis_core._host import Host, PluginInfo
    from aalis_core._plugin import Plugin

T = TypeVar("T")

CLI_CONSUMER = "cli"
CONFIG_ENV = "AALIS_CONFIG"
DEBUG_ENV = "AALIS_DEBUG"
DEFAULT_CONFIG_FILE = "aalis.toml"


# ------------------------------------------------------------------------------------------
# helpers for commands (used by plugins' commands too)
# ------------------------------------------------------------------------------------------


def config_path() -> Path | None:
    """The config file the CLI uses: ``$AALIS_CONFIG``, else ``./aalis.toml`` if present."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    local = Path(DEFAULT_CONFIG_FILE)
    return local if local.is_file() else None


#: The host built to collect plugins' commands, kept for the command that then runs, with the
#: ``_host_key()`` it was built under: one discovery and one configuration check per command.
_spare: tuple[tuple[object, ...], Host] | None = None


def _host_key() -> tuple[object, ...]:
    """What a CLI host depends on: where plugins are found (``sys.path``), the plugin filter,
    the working directory (the default ``data_dir``) and the config file (path, size, mtime)."""
    from aalis_core._discovery import LOAD_PLUGINS_ENV

    path = config_path()
    try:
        stat = path.stat() if path is not None else None
    except OSError:
        stat = None
    stamp = (stat.st_mtime_ns, stat.st_size) if stat is not None else None
    return (tuple(sys.path), os.environ.get(LOAD_PLUGINS_ENV), os.getcwd(), path, stamp)


def make_host(plugins: Sequence[Plugin] = (), *, discover: bool = True) -> Host:
    """Build (not start) the host the CLI uses; consumer name ``cli``.

    The host that loaded the plugins' commands for this command is reused when nothing it
    depends on changed since (``aalis`` loads commands, then runs one): it is handed out
    once, never started twice.
    """
    global _spare
    spare, _spare = _spare, None
    if spare is not None and not plugins and discover and spare[0] == _host_key():
        return spare[1]

    from aalis_core._host import Host

    path = config_path()
    if path is None:
        return Host(None, plugins, discover=discover, consumer=CLI_CONSUMER)
    return Host.from_config(path, plugins, discover=discover, consumer=CLI_CONSUMER)


@asynccontextmanager
async def open_host(
    plugins: Sequence[Plugin] = (), *, discover: bool = True
) -> AsyncIterator[Host]:
    """Start the CLI's host for the duration of a command.

    Reads ``$AALIS_CONFIG`` or ``./aalis.toml`` when present, else runs on the embedded
    default. ``host.capability(cap)`` gives handles for consumer ``cli``, so
    ``[consumers.cli]`` pins apply to commands.
    """
    host = make_host(plugins, discover=discover)
    async with host:
        yield host


def format_error(exc: BaseException) -> str:
    """One redacted line describing ``exc`` for stderr."""
    from aalis_core._config import ConfigError
    from aalis_core._logging import redact

    text = " ".join(str(exc).split())
    plain = (ConfigError, CapabilityAbsent, ValueError, OSError, LookupError)
    if not text:
        text = type(exc).__name__
    elif not isinstance(exc, plain):
        text = f"{type(exc).__name__}: {text}"
    return redact(text)


def stdout_closed(exc: BaseException) -> bool:
    """True when ``exc`` is the reader of our stdout going away (``aalis ... | head -3``).

    A ``BrokenPipeError`` from a plugin's own socket is an error like any other; only a
    broken *stdout* means "the reader has what it wanted".
    """
    if not isinstance(exc, BrokenPipeError):
        return False
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):  # no poll(), no real stdout: assume it is
        return True
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def quiet_exit_on_closed_stdout() -> None:
    """End the process quietly, status 0, after the reader of stdout went away.

    The reader (``head``) got all it asked for, so this is not a failure. stdout is pointed
    at ``/dev/null`` first, or Python's final flush of it would print "Exception ignored".
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    raise SystemExit(0)


def fail(exc: BaseException) -> None:
    """Print ``exc`` as one line on stderr and exit with status 1."""
    click.echo(f"Error: {format_error(exc)}", err=True)
    raise SystemExit(1)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; any exception becomes one stderr line and exit code 1.

    click's own exceptions (``click.UsageError``, ``click.Abort``...) pass through so click
    reports them its usual way.
    """
    try:
        return asyncio.run(coro)
    except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
        raise
    except KeyboardInterrupt:
        click.echo("Aborted.", err=True)
        raise SystemExit(130) from None
    except Exception as exc:
        if stdout_closed(exc):
            quiet_exit_on_closed_stdout()
        if os.environ.get(DEBUG_ENV):
            raise
        fail(exc)
        raise  # unreachable: fail() exits


# ------------------------------------------------------------------------------------------
# plugin commands
# ------------------------------------------------------------------------------------------


def load_plugin_commands(group: click.Group) -> list[str]:
    """Call ``register_commands(cli=group)`` on every loaded plugin; returns who registered.

    The plugins come from the host the command would run on (``make_host()``, built, not
    started): one discovery, and the same ``[plugins] disabled``, ``AALIS_LOAD_PLUGINS`` and
    configuration checks. A plugin whose hook raises is skipped (and logged). Raises what
    building the host raises (``ConfigError`` for an invalid configuration).
    """
    global _spare
    key = _host_key()
    host = make_host()
    registered = host.add_commands(group)
    _spare = (key, host)
    return registered


def _refused_plugins() -> list[tuple[str, str]]:
    """(name, error) of the plugins the host that loaded the commands refused."""
    if _spare is None:
        return []
    return [(info.name, info.error or "") for info in _spare[1].plugins() if info.state == "error"]


class AalisGroup(click.Group):
    """The ``aalis`` group: loads plugins' commands on first lookup.

    Loading lazily (rather than at import) keeps ``import aalis_core._cli`` cheap and lets
    tests import the group before they set ``AALIS_LOAD_PLUGINS`` or a config.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded_for: tuple[object, ...] | None = None
        self._plugin_command_names: set[str] = set()
        #: why plugins' commands could not be loaded (an invalid configuration), if they could not
        self._load_error: Exception | None = None

    def load_plugin_commands(self) -> None:
        """Load plugin commands once per plugin selection (normally once per process).

        A configuration the host refuses leaves only the core commands; the error is kept
        and shown when a command that is not there is asked for (``init`` and ``plugins``
        still run, and ``plugins`` reports the same error).
        """
        # Which plugins add commands depends on AALIS_LOAD_PLUGINS and the configuration; an
        # embedding process (or a test run) may change either between two invocations of
        # this one group object.
        key = _host_key()
        if self._loaded_for == key:
            return
        for name in self._plugin_command_names:
            self.commands.pop(name, None)
        before = set(self.commands)
        self._loaded_for = key
        self._load_error = None
        try:
            load_plugin_commands(self)
        except Exception as exc:
            self._load_error = exc
        self._plugin_command_names = set(self.commands) - before

    def invoke(self, ctx: click.Context) -> Any:
        # click turns a broken pipe into exit status 1; a closed stdout is the reader
        # (``| head``) having enough, not a failure: end quietly with 0.
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            if stdout_closed(exc):
                quiet_exit_on_closed_stdout()
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_plugin_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # The group's own commands (``init``, ``plugins``) need no plugin command: looking
        # them up first spares ``aalis plugins`` a host and every plugin's CLI module.
        if cmd_name in self.commands and cmd_name not in self._plugin_command_names:
            return self.commands[cmd_name]
        self.load_plugin_commands()
        command = super().get_command(ctx, cmd_name)
        if command is None and self._load_error is not None:
            # The command may belong to a plugin that could not load: say why, not
            # "No such command".
            raise click.ClickException(format_error(self._load_error))
        if command is None:
            refused = _refused_plugins()
            if refused:
                # A plugin the host refused (its table is invalid, its import failed) added
                # no command; the one asked for may be its: name why, not only "No such
                # command".
                lines = "\n".join(f"  {name}: {error}" for name, error in refused)
                raise click.ClickException(
                    f"no command {cmd_name!r}; these plugins failed to load, so their "
                    f"commands are missing:\n{lines}"
                )
        return command


@click.group(cls=AalisGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="aalis-core", prog_name="aalis")
def cli() -> None:
    """Aalis: a plugin host for chat agents (memory, compression, models).

    Configuration is read from $AALIS_CONFIG or ./aalis.toml when present; otherwise the
    embedded default runs (SQLite under ./.aalis).
    """
    # ``main`` configures logging; an embedding program or a test that invokes the group
    # directly may not have, and structlog's unconfigured default prints to stdout, where it
    # would corrupt ``--json`` output. Log lines belong on stderr.
    from aalis_core._logging import configure_logging, is_configured

    if not is_configured():
        configure_logging(os.environ.get("AALIS_LOG_LEVEL", "warning"))


# ------------------------------------------------------------------------------------------
# aalis init
# ------------------------------------------------------------------------------------------

_TEMPLATE = """\
# aalis.toml: configuration of the Aalis plugin host.
# Every table is checked before anything starts; an unknown key is an error.
# Values may reference environment variables as "${{NAME}}" (keep secrets out of this file).

[host]
data_dir = ".aalis"            # relative to this file
# log_level = "info"           # debug | info | warning | error | critical
# log_format = "json"          # console | json (default: console on a terminal, else json)

[plugins]
disabled = []                  # plugin names to skip; AALIS_LOAD_PLUGINS=a,b limits loading too
# Installed plugins: {installed}
#
# One table per plugin holds its settings, for example:
# [plugins.memory-sqlite]
# path = "aalis.db"            # relative to data_dir
#
# A real model for `aalis chat` and summaries: any OpenAI-compatible endpoint.
# [plugins.llm-openai]
# base_url = "https://api.openai.com/v1"   # or http://127.0.0.1:11434/v1 (Ollama), ...
# model = "gpt-4o-mini"
# api_key = "${{OPENAI_API_KEY}}"          # unset: only llm-openai fails, the rest runs

# Which provider serves a capability by default (otherwise: highest priority wins).
# A pinned provider that is not active makes the capability absent; it never falls back.
# [capabilities.memory]
# provider = "memory-sqlite"

# Pin one consumer (a plugin, "host" or "cli") to a provider.
# [consumers.memory-summary]
# memory = "memory-sqlite"
"""


def render_template() -> str:
    """The commented ``aalis.toml`` written by ``aalis init``."""
    from aalis_core._discovery import discover_plugins

    names = [p.name for p in discover_plugins(only=frozenset())]
    return _TEMPLATE.format(installed=", ".join(names) or "none")


@cli.command()
@click.option(
    "--path",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_CONFIG_FILE,
    show_default=True,
    help="Where to write the file.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: Path, force: bool) -> None:
    """Write a commented aalis.toml."""
    if path.exists() and not force:
        raise click.ClickException(f"{path} already exists; use --force to overwrite it")
    try:
        path.write_text(render_template(), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
    click.echo(f"Wrote {path}")


# ------------------------------------------------------------------------------------------
# aalis plugins
# ------------------------------------------------------------------------------------------


def _bindings_text(info: PluginInfo) -> str:
    return ", ".join(f"{cap}={provider or '-'}" for cap, provider in info.bindings.items())


def _provides_text(info: PluginInfo) -> str:
    text = ", ".join(info.provides) or "-"
    return f"{text} ({info.label})" if info.label else text


def format_plugins_table(infos: Sequence[PluginInfo]) -> str:
    """Plain-text table of ``host.plugins()`` (error last: it is the long column)."""
    header = ("NAME", "VERSION", "STATE", "PROVIDES", "BINDINGS", "ERROR")
    rows = [
        (
            info.name,
            info.version or "-",
            info.state,
            _provides_text(info),
            _bindings_text(info) or "-",
            info.error or "",
        )
        for info in infos
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def plugins_command(as_json: bool) -> None:
    """List plugins: name, version, state, error, capabilities and bindings."""

    async def collect() -> tuple[list[PluginInfo], dict[str, str | None]]:
        async with open_host() as host:
            return host.plugins(), host.consumer_bindings(CLI_CONSUMER)

    infos, cli_bindings = run_async(collect())
    if as_json:
        click.echo(json.dumps([info.to_json() for info in infos], indent=2))
    elif not infos:
        click.echo("No plugins installed.")
    else:
        click.echo(format_plugins_table(infos))
        # The commands themselves are a consumer: say where `aalis history`, `import`...
        # read and write, so a broken default store is visible here too.
        shown = ", ".join(f"{cap}={provider or '-'}" for cap, provider in cli_bindings.items())
        click.echo(f"The aalis commands (consumer {CLI_CONSUMER!r}) use: {shown or '-'}")


# ------------------------------------------------------------------------------------------
# entry point
# ------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: run ``cli``; errors are one line, never a traceback."""
    from aalis_core._logging import configure_logging

    try:
        configure_logging(os.environ.get("AALIS_LOG_LEVEL", "warning"))
        cli.main(args=list(argv) if argv is not None else None, prog_name="aalis")
    except SystemExit:
        raise
    except Exception as exc:
        if stdout_closed(exc):
            quiet_exit_on_closed_stdout()
        if os.environ.get(DEBUG_ENV):
            raise
        click.echo(f"Error: {format_error(exc)}", err=True)
        sys.exit(1)


__all__ = [
    "CLI_CONSUMER",
    "AalisGroup",
    "cli",
    "config_path",
    "fail",
    "format_error",
    "load_plugin_commands",
    "main",
    "make_host",
    "open_host",
    "render_template",
    "run_async",
]


if __name__ == "__main__":  # ``python -m aalis_core._cli``, e.g. with ``-X importtime``
    # Through the imported module, not this ``__main__`` copy: plugins' commands join the
    # group of ``aalis_core._cli``.
    from aalis_core._cli import main as _main

    _main()
