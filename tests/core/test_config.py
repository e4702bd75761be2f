"""Configuration (SPEC §2.4): whole-file validation, errors naming file/table/key, env."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest

from aalis_core import Capability, ConfigError, Host, Plugin
from aalis_core._config import load_config, parse_config, structure

store = Capability("store", object)


@attrs.frozen
class Platform:
    compress_at: float = 0.7
    history_limit: int = attrs.field(default=50, validator=attrs.validators.ge(0))


@attrs.frozen
class SummaryConfig:
    summariser: Literal["auto", "llm", "extractive"] = "auto"
    compress_at: float = attrs.field(
        default=0.7, validator=[attrs.validators.gt(0), attrs.validators.le(1)]
    )
    history_limit: int = attrs.field(default=50, validator=attrs.validators.ge(0))
    path: str = "aalis.db"
    uri: str | None = None
    tags: list[str] = attrs.field(factory=list)
    pair: tuple[int, int] = (1, 2)
    platforms: dict[str, Platform] = attrs.field(factory=dict)
    verbose: bool = False


class Summary(Plugin):
    name = "summary"
    Config = SummaryConfig
    uses = {"store": store}

    async def start(self, ctx: Any) -> None:
        self.config = ctx.config


@attrs.frozen
class NeedsUri:
    uri: str


class Mongo(Plugin):
    name = "mongo"
    Config = NeedsUri
    provides = (store,)

    async def start(self, ctx: Any) -> None:
        ctx.provide(store, object())


class Bare(Plugin):
    name = "bare"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "aalis.toml"
    path.write_text(text, encoding="utf-8")
    return path


def host_from(path: Path, *plugins: Plugin) -> Host:
    return Host.from_config(path, list(plugins), discover=False)


class Raised:
    """What ``pytest.raises`` gives, for a plugin's config error reported by the host."""

    def __init__(self, value: ConfigError) -> None:
        self.value = value


def plugin_config_error(host: Host, name: str) -> ConfigError:
    """The problems of plugin ``name``'s table: that plugin alone is in ``error``."""
    info = {i.name: i for i in host.plugins()}[name]
    assert info.state == "error"
    error = host.config_errors()[name]
    assert str(error) in (info.error or "")
    return error


def test_plugin_table_is_structured_into_its_config(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[plugins.summary]
summariser = "extractive"
compress_at = 1
tags = ["a", "b"]
pair = [3, 4]
verbose = true
[plugins.summary.platforms.discord]
compress_at = 0.5
""",
    )
    summary = Summary()
    host = host_from(path, summary)
    config = host._entries["summary"].config
    assert config == SummaryConfig(
        summariser="extractive",
        compress_at=1.0,
        tags=["a", "b"],
        pair=(3, 4),
        verbose=True,
        platforms={"discord": Platform(compress_at=0.5)},
    )
    assert isinstance(config.compress_at, float)


def test_unknown_key_names_file_table_key(tmp_path: Path) -> None:
    path = write(tmp_path, "[plugins.summary]\ncompres_at = 0.5\n")
    e = plugin_config_error(host_from(path, Summary()), "summary")
    assert (e.file, e.table, e.key) == (str(path), "plugins.summary", "compres_at")
    assert "unknown key" in str(e)
    assert "compress_at" in str(e)
    assert str(path) in str(e)


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ('compress_at = "high"', "compress_at", "expected a number, got string 'high'"),
        ("history_limit = true", "history_limit", "expected an integer, got boolean true"),
        ("history_limit = 1.5", "history_limit", "expected an integer"),
        ('summariser = "gpt"', "summariser", 'one of "auto", "llm", "extractive"'),
        ("tags = [1]", "tags[0]", "expected a string, got integer 1"),
        ('tags = "a"', "tags", "expected a list of strings"),
        ("pair = [1]", "pair", "a list of 2 items"),
        ("path = 3", "path", "expected a string"),
    ],
)
def test_wrong_type(tmp_path: Path, line: str, key: str, expected: str) -> None:
    path = write(tmp_path, f"[plugins.summary]\n{line}\n")
    err = Raised(plugin_config_error(host_from(path, Summary()), "summary"))
    assert err.value.table == "plugins.summary"
    assert err.value.key == key
    assert expected in str(err.value)


def test_out_of_range_runs_attrs_validators(tmp_path: Path) -> None:
    path = write(tmp_path, "[plugins.summary]\ncompress_at = 1.5\nhistory_limit = -1\n")
    err = Raised(plugin_config_error(host_from(path, Summary()), "summary"))
    keys = [(p.table, p.key) for p in err.value.problems]
    assert keys == [("plugins.summary", "compress_at"), ("plugins.summary", "history_limit")]
    assert "1.5" in str(err.value)
    assert "<= 1" in str(err.value)


def test_nested_table_error_names_nested_table(tmp_path: Path) -> None:
    path = write(tmp_path, "[plugins.summary.platforms.tg]\nhistory_limit = -5\n")
    err = Raised(plugin_config_error(host_from(path, Summary()), "summary"))
    assert err.value.table == "plugins.summary.platforms.tg"
    assert err.value.key == "history_limit"


def test_table_for_uninstalled_plugin_lists_installed(tmp_path: Path) -> None:
    path = write(tmp_path, "[plugins.memory-redis]\nurl = 'x'\n")
    with pytest.raises(ConfigError) as err:
        host_from(path, Summary(), Bare())
    assert err.value.table == "plugins.memory-redis"
    assert "installed plugins: bare, summary" in str(err.value)


def test_host_table_errors(tmp_path: Path) -> None:
    path = write(tmp_path, '[host]\nlog_level = "loud"\ncolour = true\n[extra]\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    where = [(p.table, p.key) for p in err.value.problems]
    assert (None, "extra") in where
    assert ("host", "log_level") in where
    assert ("host", "colour") in where


def test_capability_and_consumer_tables_are_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[capabilities.store]
provider = "nobody"
[capabilities.stor]
provider = "mongo"
[consumers.summary]
llm = "mongo"
[consumers.ghost]
store = "mongo"
[consumers.cli]
store = "mongo"
""",
    )
    with pytest.raises(ConfigError) as err:
        host_from(path, Summary(), Mongo())
    messages = [str(p) for p in err.value.problems]
    assert any("[capabilities.store] key 'provider'" in m and "'nobody'" in m for m in messages)
    assert any("does not provide capability 'stor'" in m for m in messages)
    assert any("does not use capability 'llm'" in m for m in messages)
    assert any("'ghost'" in m for m in messages)
    assert len(messages) == 4  # [consumers.cli] is valid


def test_capabilities_table_shape(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"capabilities": {"store": {"provider": 3, "fallback": "x"}}})
    keys = {p.key for p in err.value.problems}
    assert keys == {"provider", "fallback"}


def test_plugin_without_config_rejects_keys(tmp_path: Path) -> None:
    host = Host({"plugins": {"bare": {"x": 1}}}, [Bare()], discover=False)
    assert "takes no settings" in str(plugin_config_error(host, "bare"))


def test_env_substitution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AALIS_T_USER", "bob")
    monkeypatch.setenv("AALIS_T_LIMIT", "7")
    monkeypatch.setenv("AALIS_T_FLAG", "yes")
    path = write(
        tmp_path,
        """
[plugins.summary]
uri = "mongodb://${AALIS_T_USER}:pw@db/x"
history_limit = "${AALIS_T_LIMIT}"
verbose = "${AALIS_T_FLAG}"
path = "literal $${NOT_EXPANDED}"
""",
    )
    summary = Summary()
    config = host_from(path, summary)._entries["summary"].config
    assert config.uri == "mongodb://bob:pw@db/x"
    assert type(config.uri) is str
    assert config.history_limit == 7
    assert config.verbose is True
    assert config.path == "literal ${NOT_EXPANDED}"


def test_missing_env_var_is_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AALIS_T_MISSING", raising=False)
    path = write(tmp_path, '[plugins.summary]\nuri = "${AALIS_T_MISSING}"\n')
    err = Raised(plugin_config_error(host_from(path, Summary()), "summary"))
    assert (err.value.table, err.value.key) == ("plugins.summary", "uri")
    assert "AALIS_T_MISSING is not set" in str(err.value)


def test_env_secret_is_not_printed_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AALIS_T_SECRET", "hunter2-very-secret")
    host = Host(
        {"plugins": {"summary": {"history_limit": "${AALIS_T_SECRET}"}}},
        [Summary()],
        discover=False,
    )
    error = plugin_config_error(host, "summary")
    assert "hunter2" not in str(error)
    assert "${AALIS_T_SECRET}" in str(error)
    assert "hunter2" not in str(host.plugins())


def test_unconfigured_plugin_with_required_keys_is_disabled(make_host: Any) -> None:
    host = make_host(Mongo())
    info = host.plugins()[0]
    assert info.state == "disabled"
    assert "[plugins.mongo] needs 'uri'" in (info.error or "")


def test_missing_required_key_in_present_table(make_host: Any) -> None:
    err = Raised(
        plugin_config_error(make_host(Mongo(), config={"plugins": {"mongo": {}}}), "mongo")
    )
    assert (err.value.table, err.value.key) == ("plugins.mongo", "uri")
    assert "missing required key" in str(err.value)


async def test_a_bad_plugin_table_fails_that_plugin_and_the_rest_starts(tmp_path: Path) -> None:
    started: list[str] = []

    class Watch(Plugin):
        name = "watch"

        async def start(self, ctx: Any) -> None:
            started.append("watch")

    path = write(tmp_path, "[plugins.summary]\nbogus = 1\n")
    host = host_from(path, Watch(), Summary())
    assert "bogus" in str(plugin_config_error(host, "summary"))
    async with host:
        assert started == ["watch"]
        assert {i.name: i.state for i in host.plugins()} == {"watch": "active", "summary": "error"}


async def test_nothing_starts_on_an_error_in_the_hosts_own_tables(tmp_path: Path) -> None:
    started: list[str] = []

    class Watch(Plugin):
        name = "watch"

        async def start(self, ctx: Any) -> None:
            started.append("watch")

    monkeypatch_free = write(tmp_path, '[host]\nlog_level = "loud"\n[plugins.summary]\nbogus = 1\n')
    with pytest.raises(ConfigError, match="log_level"):
        host_from(monkeypatch_free, Watch(), Summary())
    assert started == []


def test_relative_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sub = tmp_path / "conf"
    sub.mkdir()
    path = write(sub, '[host]\ndata_dir = "state"\n')
    monkeypatch.chdir(tmp_path)
    assert host_from(path).data_dir == sub / "state"
    assert Host({"host": {"data_dir": "here"}}, discover=False).data_dir == tmp_path / "here"
    assert Host(discover=False).data_dir == tmp_path / ".aalis"
    assert Host({"host": {"data_dir": str(tmp_path / "abs")}}, discover=False).data_dir == (
        tmp_path / "abs"
    )


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(write(tmp_path, "[host\n"))
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_disabled_must_be_list_of_strings() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"plugins": {"disabled": "mongo"}})
    assert (err.value.table, err.value.key) == ("plugins", "disabled")


def test_structure_helper_for_plugin_authors() -> None:
    assert structure(Platform, {"compress_at": 1}) == Platform(compress_at=1.0)
    with pytest.raises(ConfigError):
        structure(Platform, {"history_limit": "x"}, table_name="plugins.x")


def test_host_log_settings_are_validated_and_applied() -> None:
    before = os.environ.copy()
    host = Host({"host": {"log_level": "debug", "log_format": "json"}}, discover=False)
    assert host.config.host.log_level == "debug"
    assert os.environ == before


@attrs.frozen
class CrashingConfig:
    size: int = 1

    def __attrs_post_init__(self) -> None:
        raise RuntimeError("bug in the plugin's config code")


async def test_crashing_config_class_fails_only_that_plugin(make_host: Any) -> None:
    class Crashy(Plugin):
        name = "crashy"
        Config = CrashingConfig

    class NotAttrs(Plugin):
        name = "not-attrs"
        Config = dict

    async with make_host(Crashy(), NotAttrs(), Bare()) as host:
        info = {p.name: p for p in host.plugins()}
    assert info["crashy"].state == "error"
    assert info["crashy"].error == "config failed: RuntimeError: bug in the plugin's config code"
    assert info["not-attrs"].state == "error"
    assert "attrs class" in (info["not-attrs"].error or "")
    assert info["bare"].state == "active"


def test_malformed_declarations_fail_that_plugin(make_host: Any) -> None:
    class BadUses(Plugin):
        name = "bad-uses"
        uses = {"store": "store"}  # type: ignore[dict-item]

    class BadProvides(Plugin):
        name = "bad-provides"
        provides = store  # type: ignore[assignment]

    info = {p.name: p for p in make_host(BadUses(), BadProvides(), Bare()).plugins()}
    assert info["bad-uses"].state == "error"
    assert "`uses`" in (info["bad-uses"].error or "")
    assert info["bad-provides"].state == "error"
    assert info["bare"].state == "discovered"


def test_host_table_goes_through_the_plugin_tables_converter() -> None:
    """``[host]`` is structured by ``structure``, the converter of plugin tables: the same
    wrong value gets the same message in either place (docs/host/configuration-internals.md)."""
    from aalis_core._config import HostSettings

    table = {"hook_timeout": "soon", "log_level": "loud", "colour": True}
    with pytest.raises(ConfigError) as from_file:
        parse_config({"host": table}, source="<config>")
    with pytest.raises(ConfigError) as direct:
        structure(HostSettings, table, table_name="host")
    assert [str(p) for p in from_file.value.problems] == [str(p) for p in direct.value.problems]
    assert len(direct.value.problems) == 3
