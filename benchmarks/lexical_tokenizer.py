"""The SQLite lexical leg's tokenizer, measured: FTS5 ``trigram`` over the raw text against
FTS5 ``unicode61`` over computed terms (``lexical_terms``: words, identifier parts, CJK
bigrams, whole identifiers), each with BM25 alone and with the identifier tier.

The set is synthetic and built for the hard case of docs/recall.md ("Lexical leg"): for
every query (half English with an order number, invoice, function name, plate or version;
half Chinese with a two-character name) the history holds the target, which names the
identifier in other words, and four look-alikes that repeat the query's wording around a
near identifier (AX-55813-K for AX-55812-K, 王蕾 for 王磊, ``_refund_windows``), among
unrelated chatter. Reported per language: hit@1, hit@5, MRR (over the first 10), query
p50/p95, and the index's bytes per message and build time (dbstat).

Run: ``.venv/bin/python benchmarks/lexical_tokenizer.py [--quick] [--out FILE]`` (the report
goes to ``benchmarks/results/lexical_tokenizer.json``).
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aalis_api_vectorstore import lexical_terms

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, run

NAME = "lexical_tokenizer"

SURNAMES = "王李张刘陈杨黄赵吴周徐孙朱胡郭何林罗郑梁"
GIVEN = "磊蕾雷伟芳娜敏静丽强军洋勇艳杰涛明超秀霞平刚"
EN_QUERY = [
    "what is the status of order {x}, has it shipped yet?",
    "did the payment for invoice {x} go through?",
    "why does {x} fail on the last day of the month?",
    "is the car with plate {x} still in the garage?",
    "which release fixed bug {x} in the parser?",
]
EN_TARGET = [
    "{x} left the warehouse on monday",
    "invoice {x} was paid by card",
    "{x} returns None for expired orders",
    "plate {x} was towed this morning",
    "{x} was fixed in the spring release",
]
ZH_QUERY = [
    "上次{x}问的那个订单到了吗",
    "{x}的电话号码是多少",
    "你还记得{x}推荐的那家餐厅吗",
    "{x}明天几点的飞机",
    "{x}的生日礼物买好了吗",
]
ZH_TARGET = [
    "{x}说订单还没到",
    "{x}的号码我存在手机里了",
    "{x}推荐了巷子里的川菜馆",
    "{x}坐早上八点的航班",
    "给{x}买了一条围巾",
]
FILLER = [
    "we talked about the weather and the train to the coast",
    "remind me to buy milk and bread tomorrow",
    "the meeting moved to thursday afternoon",
    "the assistant suggested a shorter route home",
    "今天天气很好我们去公园散步吧",
    "明天下午三点开会别忘了带电脑",
    "周末一起去爬山怎么样",
    "晚饭吃饺子还是面条",
]
CJK = re.compile(r"[\u4e00-\u9fff]+")
Case = tuple[str, int, str]  # query, row id of its target, language


def _identifier(rng: random.Random, kind: int) -> str:
    if kind == 0:
        return f"AX-{rng.randint(10000, 99999)}-{rng.choice('KJLM')}"
    if kind == 1:
        return f"INV-2024-{rng.randint(1000, 9999)}"
    if kind == 2:
        words = ["parse", "refund", "window", "order", "sync", "cache", "load", "user"]
        return "_".join(rng.sample(words, 3))
    if kind == 3:
        return (
            f"粤B·{rng.choice('DFK')}{rng.randint(100, 999)}{rng.choice('ABK')}{rng.randint(1, 9)}"
        )
    return f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"


def _near_identifier(rng: random.Random, x: str, kind: int) -> str:
    if kind == 2:
        return x + "s" if rng.random() < 0.5 else x.replace("_", "_re", 1)
    chars = list(x)
    i = rng.choice([i for i, ch in enumerate(chars) if ch.isdigit()])
    chars[i] = str((int(chars[i]) + 1) % 10)
    return "".join(chars)


def build(rng: random.Random, cases: int, filler: int) -> tuple[list[str], list[Case]]:
    """The history and its queries. Names are unique per case and no look-alike takes a
    case's name, so a "wrong" first hit is never a message about the very same person."""
    names = [a + b for a in SURNAMES for b in GIVEN]
    rng.shuffle(names)
    spare = sorted(names[cases:])
    docs: list[str] = []
    out: list[Case] = []
    for c in range(cases):
        template = rng.randrange(5)
        if c % 2:
            x = names[c]
            query, target = ZH_QUERY[template].format(x=x), ZH_TARGET[template].format(x=x)
            near = [n for n in spare if n[0] == x[0] or n[1] == x[1]]
            looks = [ZH_QUERY[template].format(x=rng.choice(near)) for _ in range(4)]
        else:
            x = _identifier(rng, template)
            query, target = EN_QUERY[template].format(x=x), EN_TARGET[template].format(x=x)
            looks = [
                EN_QUERY[template].format(x=_near_identifier(rng, x, template)) for _ in range(4)
            ]
        out.append((query, len(docs), "zh" if c % 2 else "en"))
        docs.append(target)
        docs.extend(look for look in looks if look != query)
    docs.extend(rng.choice(FILLER) for _ in range(filler))
    return docs, out


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class Trigram:
    """FTS5 ``trigram`` over the raw text; a query is its words of 3+ characters and the
    3-character windows of its CJK runs (trigram matches nothing shorter)."""

    def __init__(self, docs: list[str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        start = time.perf_counter()
        self.conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(docs))
        self.build_s = time.perf_counter() - start

    def search(self, query: str, k: int, tier: bool) -> list[int]:
        parts = [w for w in re.findall(r"[\w\-·.]+", query) if len(w) >= 3 and not CJK.search(w)]
        for chars in CJK.findall(query):
            parts += [chars[i : i + 3] for i in range(len(chars) - 2)]
        terms = list(dict.fromkeys(p.lower() for p in parts))
        if not terms:
            return []
        ids = list(dict.fromkeys(lexical_terms(query).identifiers)) if tier else []
        rank = " + ".join("(instr(lower(x), ?) > 0)" for _ in ids) or "0"
        sql = f"SELECT rowid, {rank} AS r FROM t WHERE t MATCH ? ORDER BY r DESC, bm25(t) LIMIT ?"
        match = " OR ".join(map(_quoted, terms))
        return [row[0] for row in self.conn.execute(sql, [*ids, match, k])]


class Terms:
    """FTS5 ``unicode61`` over ``lexical_terms`` (what vectorstore-sqlite stores)."""

    def __init__(self, docs: list[str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(words, idents, "
            "tokenize=\"unicode61 remove_diacritics 0 tokenchars '-_.'\")"
        )
        start = time.perf_counter()
        rows = []
        for i, doc in enumerate(docs):
            terms = lexical_terms(doc)
            rows.append((i, " ".join(terms.words), " ".join(terms.identifiers)))
        self.conn.executemany("INSERT INTO t (rowid, words, idents) VALUES (?, ?, ?)", rows)
        self.build_s = time.perf_counter() - start

    def search(self, query: str, k: int, tier: bool) -> list[int]:
        terms = lexical_terms(query)
        words = list(dict.fromkeys(terms.words))
        ids = list(dict.fromkeys(terms.identifiers))
        parts = []
        if words:
            parts.append("words : (" + " OR ".join(map(_quoted, words)) + ")")
        if ids:
            parts.append("idents : (" + " OR ".join(map(_quoted, ids)) + ")")
        if not parts:
            return []
        ranked = ids if tier else []
        rank = " + ".join("(instr(' ' || idents || ' ', ?) > 0)" for _ in ranked) or "0"
        sql = (
            f"SELECT rowid, {rank} AS r FROM t WHERE t MATCH ? "
            "ORDER BY r DESC, bm25(t, 1.0, 2.0) LIMIT ?"
        )
        params = [f" {i} " for i in ranked] + [" OR ".join(parts), k]
        return [row[0] for row in self.conn.execute(sql, params)]


def index_bytes(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 't%'").fetchone()[0])


def evaluate(search: Callable[[str], list[int]], cases: list[Case], lang: str) -> dict[str, Any]:
    chosen = [(q, t) for q, t, language in cases if language == lang]
    hit1 = hit5 = mrr = 0.0
    times: list[float] = []
    for query, target in chosen:
        start = time.perf_counter()
        got = search(query)
        times.append(time.perf_counter() - start)
        hit1 += got[:1] == [target]
        hit5 += target in got[:5]
        mrr += 1 / (got.index(target) + 1) if target in got else 0.0
    n = len(chosen)
    return {
        "hit@1": round(hit1 / n, 3),
        "hit@5": round(hit5 / n, 3),
        "mrr": round(mrr / n, 3),
        "p50_ms": round(statistics.median(times) * 1000, 2),
        "p95_ms": round(sorted(times)[int(0.95 * n)] * 1000, 2),
    }


def main(args: argparse.Namespace) -> None:
    cases_n = 40 if args.quick else 240
    fillers = [500] if args.quick else [2000, 50000]
    report = Report(NAME, args, {"cases": cases_n, "filler": fillers, "seed": 7})
    for filler in fillers:
        docs, cases = build(random.Random(7), cases_n, filler)
        trigram, terms = Trigram(docs), Terms(docs)
        sizes = {
            "trigram": (index_bytes(trigram.conn) / len(docs), trigram.build_s),
            "unicode61 + terms": (index_bytes(terms.conn) / len(docs), terms.build_s),
        }
        rows = []
        for label, store, tier in (
            ("trigram, BM25", trigram, False),
            ("trigram, identifier tier + BM25", trigram, True),
            ("unicode61 + terms, BM25", terms, False),
            ("unicode61 + terms, identifier tier + BM25", terms, True),
        ):

            def search(query: str, store: Trigram | Terms = store, tier: bool = tier) -> list[int]:
                return store.search(query, 10, tier)

            tokenizer = "trigram" if store is trigram else "unicode61 + terms"
            for lang in ("en", "zh"):
                figures = evaluate(search, cases, lang)
                report.row(
                    messages=len(docs),
                    leg=label,
                    language=lang,
                    index_bytes_per_message=round(sizes[tokenizer][0]),
                    build_s=round(sizes[tokenizer][1], 2),
                    **figures,
                )
                rows.append([label, lang, *figures.values(), round(sizes[tokenizer][0])])
        print_table(
            f"{len(docs)} messages, {len(cases)} queries (half Chinese)",
            ["leg", "lang", "hit@1", "hit@5", "MRR", "p50 ms", "p95 ms", "index B/msg"],
            rows,
        )
        short = docs[cases[1][1]][:2]
        report.note(
            f"a two-character name alone ({short}) at {len(docs)} messages: trigram finds "
            f"{len(trigram.search(short, 5, True))}, terms find {len(terms.search(short, 5, True))}"
        )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, (__doc__ or "").split("\n\n")[0]))
