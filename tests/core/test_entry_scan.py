"""The fast entry-point read finds what importlib_metadata finds, and steps aside for zips."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

import importlib_metadata

from aalis_core._entry_scan import scan

GROUPS = ("aalis.plugins", "aalis.hookspecs")


def _metadata_view() -> list[tuple[str, str, str]]:
    return sorted(
        {(e.group, e.name, e.value) for e in importlib_metadata.entry_points() if e.group in GROUPS}
    )


def test_the_scan_finds_what_importlib_metadata_finds(dists: Any) -> None:
    dists.module(
        "t_scan_mod", "from aalis_core import Plugin\nclass P(Plugin):\n    name = 't-scan'\n"
    )
    dists.dist(
        "t-scan-dist", "3.1", plugins={"t-scan": "t_scan_mod:P"}, hookspecs={"t-s": "t_scan_mod"}
    )
    # a second copy of the same distribution further down sys.path is not read (first wins)
    later = dists.root.parent / "later"
    (later / "t_scan_dist-9.9.dist-info").mkdir(parents=True)
    (later / "t_scan_dist-9.9.dist-info" / "entry_points.txt").write_text(
        "[aalis.plugins]\nt-scan = elsewhere:P\n"
    )
    sys.path.append(str(later))
    try:
        found = scan(sys.path, GROUPS)
        assert found is not None
        mine = sorted((e.group, e.name, e.value) for eps in found.values() for e in eps)
        assert mine == _metadata_view()
    finally:
        sys.path.remove(str(later))
    ep = next(e for e in found["aalis.plugins"] if e.name == "t-scan")
    assert ep.load().name == "t-scan"
    assert ep.dist._path.name == "t_scan_dist-3.1.dist-info"


def test_a_zip_on_sys_path_leaves_the_read_to_importlib_metadata(tmp_path: Path) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("t_zipped-1.0.dist-info/entry_points.txt", "[aalis.plugins]\nz = m:P\n")
    assert scan([str(archive)], GROUPS) is None
    assert scan([str(tmp_path / "missing")], GROUPS) == {group: [] for group in GROUPS}
