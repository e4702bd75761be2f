"""Discovery through real entry points (dist-info folders on sys.path, as pip leaves them)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from aalis_core import Host, Plugin
from aalis_core._discovery import discover_plugins
from aalis_core.testing import capture_logs

GOOD = """
from aalis_core import Plugin, hookimpl

class Good(Plugin):
    name = "t-good"

    async def start(self, ctx):
        ctx.logger.debug("good started")

    @hookimpl
    def t_pinged(self, who):
        PINGS.append(who)

PINGS = []
"""

SPECS = """
from aalis_core import hookspec

@hookspec
def t_pinged(who):
    "A test event published by a pretend contract."
"""


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Restrict loading to the throwaway plugins (installed real ones are not imported)."""

    def set_only(*names: str) -> None:
        monkeypatch.setenv("AALIS_LOAD_PLUGINS", ",".join(names))

    return set_only


async def test_plugin_from_real_entry_point_with_contract_hookspecs(dists: Any, only: Any) -> None:
    dists.module("t_specs_mod", SPECS)
    dists.module("t_good_mod", GOOD)
    dists.dist("t-contract", hookspecs={"t": "t_specs_mod"})
    dists.dist("t-good-dist", "1.2.3", plugins={"t-good": "t_good_mod:Good"})
    only("t-good")
    async with Host() as host:
        info = {p.name: p for p in host.plugins()}
        assert info["t-good"].state == "active"
        assert info["t-good"].version == "1.2.3"  # the distribution's version
        await host.emit("t_pinged", who="me")
        assert sys.modules["t_good_mod"].PINGS == ["me"]
        # installed plugins outside AALIS_LOAD_PLUGINS are listed, not imported
        others = [p for p in host.plugins() if p.name != "t-good"]
        assert all(p.state == "disabled" for p in others)
        assert all("AALIS_LOAD_PLUGINS" in (p.error or "") for p in others)


async def test_broken_plugins_are_listed_in_error_and_host_goes_on(dists: Any, only: Any) -> None:
    dists.module("t_specs_mod2", SPECS)
    dists.module("t_good_mod2", GOOD.replace("t-good", "t-good2"))
    dists.module("t_broken_mod", "import not_a_module_anywhere_xyz\n")
    dists.module(
        "t_named_mod",
        "from aalis_core import Plugin\nclass Other(Plugin):\n    name = 'other-name'\n",
    )
    dists.module("t_notplugin_mod", "class Thing:\n    name = 't-notplugin'\n")
    dists.module(
        "t_ctor_mod",
        "from aalis_core import Plugin\nclass C(Plugin):\n    name = 't-ctor'\n"
        "    def __init__(self):\n        raise RuntimeError('ctor failed')\n",
    )
    dists.dist("t-contract2", hookspecs={"t2": "t_specs_mod2"})
    dists.dist(
        "t-mixed",
        "0.3",
        plugins={
            "t-good2": "t_good_mod2:Good",
            "t-broken": "t_broken_mod:Broken",
            "t-mismatch": "t_named_mod:Other",
            "t-notplugin": "t_notplugin_mod:Thing",
            "t-ctor": "t_ctor_mod:C",
        },
    )
    only("t-good2", "t-broken", "t-mismatch", "t-notplugin", "t-ctor")
    with capture_logs() as logs:
        async with Host() as host:
            info = {p.name: p for p in host.plugins()}
    logged = {
        line["plugin"]: line["error"]
        for line in logs.lines
        if line["event"] == "plugin failed to load"
    }
    assert set(logged) == {"t-broken", "t-mismatch", "t-notplugin", "t-ctor"}
    assert "not_a_module_anywhere_xyz" in logged["t-broken"]
    assert info["t-good2"].state == "active"
    assert info["t-broken"].state == "error"
    assert "import failed: ModuleNotFoundError" in (info["t-broken"].error or "")
    assert "not_a_module_anywhere_xyz" in (info["t-broken"].error or "")
    assert info["t-mismatch"].state == "error"
    assert "'t-mismatch' does not match Plugin.name 'other-name'" in (
        info["t-mismatch"].error or ""
    )
    assert info["t-notplugin"].state == "error"
    assert "Plugin subclass" in (info["t-notplugin"].error or "")
    assert info["t-ctor"].state == "error"
    assert "ctor failed" in (info["t-ctor"].error or "")


async def test_hookspec_module_failing_to_import(dists: Any, only: Any) -> None:
    dists.module("t_badspecs_mod", "raise ImportError('contract broken')\n")
    dists.module("t_good_mod3", GOOD.replace("t-good", "t-good3"))
    dists.dist("t-badcontract", hookspecs={"bad": "t_badspecs_mod"})
    dists.dist("t-good3-dist", plugins={"t-good3": "t_good_mod3:Good"})
    only("t-good3")
    host = Host()
    assert ("bad", "import failed: ImportError: contract broken") in host.hookspec_errors
    info = host.plugins()
    good = next(p for p in info if p.name == "t-good3")
    # its hook is declared by nobody now: a load error naming plugin and hook
    assert good.state == "error"
    assert "'t-good3'" in (good.error or "")
    assert "'t_pinged'" in (good.error or "")


def test_disabled_plugins_are_not_imported(dists: Any, only: Any, tmp_path: Any) -> None:
    dists.module("t_never_mod", "raise SystemExit('must not be imported')\n")
    dists.dist("t-never-dist", plugins={"t-never": "t_never_mod:Never"})
    only("t-never")
    host = Host({"plugins": {"disabled": ["t-never"]}})
    info = next(p for p in host.plugins() if p.name == "t-never")
    assert (info.state, info.error) == ("disabled", "disabled in [plugins] disabled")
    assert "t_never_mod" not in sys.modules


def test_load_plugins_env_empty_loads_none(dists: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dists.module("t_never_mod2", "raise SystemExit('must not be imported')\n")
    dists.dist("t-never2-dist", plugins={"t-never2": "t_never_mod2:Never"})
    monkeypatch.setenv("AALIS_LOAD_PLUGINS", "")
    found = {p.name: p for p in discover_plugins()}
    assert found["t-never2"].state == "disabled"
    assert "t_never_mod2" not in sys.modules


async def test_import_time_sys_exit_is_contained(dists: Any, only: Any) -> None:
    dists.module("t_exit_mod", "raise SystemExit(3)\n")
    dists.dist("t-exit-dist", plugins={"t-exit": "t_exit_mod:X"})
    only("t-exit")
    async with Host() as host:
        info = next(p for p in host.plugins() if p.name == "t-exit")
        assert info.state == "error"


async def test_instance_wins_over_discovered_plugin_of_same_name(dists: Any, only: Any) -> None:
    dists.module("t_good_mod4", GOOD.replace("t-good", "t-good4").replace("@hookimpl", "#"))
    dists.dist("t-good4-dist", "4.0", plugins={"t-good4": "t_good_mod4:Good"})
    only("t-good4")

    class Replacement(Plugin):
        name = "t-good4"
        version = "local"

    replacement = Replacement()
    async with Host(plugins=[replacement]) as host:
        info = [p for p in host.plugins() if p.name == "t-good4"]
        assert len(info) == 1
        assert info[0].version == "local"
        assert host.plugin("t-good4") is replacement


def test_discovered_plugin_config_is_validated(dists: Any, only: Any) -> None:
    dists.module(
        "t_conf_mod",
        "import attrs\nfrom aalis_core import Plugin\n"
        "@attrs.frozen\nclass Cfg:\n    size: int = 1\n"
        "class P(Plugin):\n    name = 't-conf'\n    Config = Cfg\n",
    )
    dists.dist("t-conf-dist", plugins={"t-conf": "t_conf_mod:P"})
    only("t-conf")
    host = Host({"plugins": {"t-conf": {"size": "big"}}})
    error = host.config_errors()["t-conf"]
    assert (error.table, error.key) == ("plugins.t-conf", "size")
    assert {i.name: i.state for i in host.plugins()}["t-conf"] == "error"
    # a table for an installed plugin that is not loaded is accepted unchecked
    only()
    Host({"plugins": {"t-conf": {"size": "big"}}})


def test_discover_false_skips_entry_points(dists: Any, only: Any) -> None:
    dists.module("t_never_mod3", "raise SystemExit('must not be imported')\n")
    dists.dist("t-never3-dist", plugins={"t-never3": "t_never_mod3:Never"})
    only("t-never3")
    assert Host(discover=False).plugins() == []
