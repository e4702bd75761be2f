"""``aalis vector check`` on the lexical index (docs/host/recall.md, "Identity and the recall
check"): a SQLite file whose FTS rows were edited by hand is reported, per session, and
``--repair`` rewrites them from the stored text, in real ``aalis`` processes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from .test_processes import CONFIG, T0, check_table, export_file, said, vector_db


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "aalis.toml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def test_check_reports_and_repairs_a_damaged_lexical_index(data: Path, aalis: Any) -> None:
    name = export_file(
        data,
        {
            "orders": [
                said("order AX-55812-K has not arrived", T0),
                said("order AX-55813-K arrived on Monday", T0 + 1000),
                said("parcel SF1402938475 is at the depot", T0 + 2000),
            ],
            "other": [said("王磊明天来公司拿合同", T0 + 3000)],
        },
    )
    run = aalis("import", name)
    assert run.returncode == 0, run.stderr
    clean = aalis("vector", "check")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert check_table(clean.stdout)["TOTAL"]["lexical"] == 0
    path = vector_db(data)
    conn = sqlite3.connect(path)
    try:
        ids = dict(conn.execute("SELECT text, id FROM vectors").fetchall())
        conn.execute(  # a missing entry
            "DELETE FROM vectors_lex WHERE rowid = ?", (ids["order AX-55812-K has not arrived"],)
        )
        conn.execute(  # a stale one: another text's terms
            "UPDATE vectors_lex SET words = 'depot', idents = '' WHERE rowid = ?",
            (ids["王磊明天来公司拿合同"],),
        )
        conn.execute(  # an entry of no vector
            "INSERT INTO vectors_lex (rowid, words, idents) VALUES (9999, 'ghost', '')"
        )
        conn.commit()
    finally:
        conn.close()
    search = aalis("vector", "search", "AX-55812-K", "-k", "1")
    first = search.stdout.splitlines()[0]
    assert "AX-55812-K has not arrived" in first
    assert "vector" in first  # found by its vector only: the lexical leg misses it
    check = aalis("vector", "check")
    assert check.returncode == 1, check.stdout + check.stderr
    table = check_table(check.stdout)
    assert table["orders"]["lexical"] == 1
    assert table["other"]["lexical"] == 1
    assert table["(lexical, no vector)"]["lexical"] == 1
    assert table["TOTAL"]["missing"] == table["TOTAL"]["stale"] == 0  # the vectors are fine
    repair = aalis("vector", "check", "--repair")
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert "after repair: index matches the store" in repair.stdout
    after = aalis("vector", "check")
    assert after.returncode == 0, after.stdout + after.stderr
    assert check_table(after.stdout)["TOTAL"]["lexical"] == 0
    first = aalis("vector", "search", "AX-55812-K", "-k", "1").stdout.splitlines()[0]
    assert "AX-55812-K has not arrived" in first
    assert "both" in first  # both legs find it again
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM vectors_lex WHERE rowid = 9999").fetchone() == (
            0,
        )
    finally:
        conn.close()
