"""memory-mongodb vs the same operations hand-written with pymongo's ``AsyncMongoClient``.

Both run against one server in one run, interleaved: ``$AALIS_TEST_MONGODB_URI`` when set,
otherwise the pinned nx-27017 wire-protocol server (MongoDB's protocol on SQLite) started by
this script on loopback. The report names the server; figures on nx-27017 say how our code
compares with plain pymongo, not how fast MongoDB is.

Operations, hand-written the way a developer would with the same indexes:

* ``save_message``: memory-mongodb reserves an insertion sequence (``find_one_and_update``
  ``$inc`` on a counter, so saves from several processes keep a strict order) and inserts;
  by hand: one ``insert_one`` with a per-process counter ``n`` for ties (no order across
  processes);
* ``get_history(50)`` on a session of 5,000 messages, 90 % archived: ``find`` on
  ``(session_id, archived, timestamp, seq)`` newest first, limit 50, reversed;
* ``archive_span(1000)``: the ids of the first 1,000 active messages, then one ``update_many``;
* ``commit_metadata`` of 500 puts: one ordered ``bulk_write`` of upserting ``ReplaceOne``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    Report,
    interleaved,
    mongodb_server,
    parse_args,
    print_table,
    ratio,
    run,
    scratch_dir,
)

NAME = "mongodb_vs_pymongo"
BASE_TS = 1_700_000_000_000
TEXT = "the assistant looked the parcel up, found it in transit and promised an update tomorrow"


class HandWritten:
    """The four operations with plain pymongo on collections of the same shape."""

    def __init__(self, client: Any, database: str) -> None:
        db = client[database]
        self.messages = db["hand_messages"]
        self.metadata = db["hand_metadata"]
        self.i = 0

    async def ensure_indexes(self) -> None:
        await self.messages.create_index(
            [("session_id", 1), ("archived", 1), ("timestamp", 1), ("n", 1)]
        )
        await self.metadata.create_index([("namespace", 1), ("key", 1)], unique=True)

    @staticmethod
    def doc(session_id: str, i: int, archived: bool = False) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "timestamp": BASE_TS + i,
            "n": i,
            "archived": archived,
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{i} {TEXT}",
        }

    async def save(self) -> None:
        self.i += 1
        await self.messages.insert_one(self.doc("hand-save", self.i))

    async def history(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        docs = await self.messages.find(
            {"session_id": session_id, "archived": False},
            sort=[("timestamp", -1), ("n", -1)],
            limit=limit,
        ).to_list()
        docs.reverse()
        return list(docs)

    async def archive(self, session_id: str, count: int) -> int:
        docs = await self.messages.find(
            {"session_id": session_id, "archived": False},
            {"_id": 1},
            sort=[("timestamp", 1), ("n", 1)],
            limit=count,
        ).to_list()
        result = await self.messages.update_many(
            {"_id": {"$in": [d["_id"] for d in docs]}, "archived": False},
            {"$set": {"archived": True}},
        )
        return int(result.modified_count)

    async def commit(self, batch: int, n: int) -> None:
        from pymongo import ReplaceOne

        now = int(time.time() * 1000)
        await self.metadata.bulk_write(
            [
                ReplaceOne(
                    {"namespace": "bench", "key": f"key-{i:04d}"},
                    {
                        "namespace": "bench",
                        "key": f"key-{i:04d}",
                        "data": {"batch": batch, "i": i, "text": TEXT},
                        "updated_at": now,
                    },
                    upsert=True,
                )
                for i in range(n)
            ],
            ordered=True,
        )


async def main(args: argparse.Namespace) -> None:
    from aalis_api_memory import Put, StoredMessage
    from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
    from aalis_schema_message import Message
    from pymongo import AsyncMongoClient

    session_size = 500 if args.quick else 5_000
    span = 50 if args.quick else 1_000
    n_ops = 50 if args.quick else 500
    saves_rounds, saves_per_round = (3, 5) if args.quick else (10, 20)
    report = Report(
        NAME,
        args,
        {
            "session_size": session_size,
            "archived_share": 0.9,
            "archive_span": span,
            "metadata_ops": n_ops,
        },
    )
    rows: list[list[Any]] = []
    with scratch_dir("mongodb") as workdir:
        async with mongodb_server(workdir) as (uri, server):
            report.set_server(server)
            print(f"server: {server['kind']}", flush=True)
            ours_db, hand_db = (
                f"bench_ours_{uuid.uuid4().hex[:8]}",
                f"bench_hand_{uuid.uuid4().hex[:8]}",
            )
            store = await MongoMemory.connect(MongoConfig(uri=uri, database=ours_db))
            client: Any = AsyncMongoClient(uri)
            hand = HandWritten(client, hand_db)
            await hand.ensure_indexes()
            try:
                # save_message
                n = 0

                async def ours_save() -> None:
                    nonlocal n
                    n += 1
                    await store.save_message(
                        "ours-save",
                        Message(role="user", content=f"{n} {TEXT}", timestamp=BASE_TS + n),
                    )

                stats = await interleaved(
                    {"ours": ours_save, "hand": hand.save},
                    rounds=saves_rounds,
                    calls_per_round=saves_per_round,
                )
                rows.append(
                    [
                        "save_message (sequential)",
                        stats["ours"]["median_us"] / 1000,
                        stats["hand"]["median_us"] / 1000,
                    ]
                )

                # get_history(50)
                archived_until = int(session_size * 0.9)
                await store.import_messages(
                    "ours-history",
                    [
                        StoredMessage(
                            Message(
                                role="user" if i % 2 == 0 else "assistant",
                                content=f"{i} {TEXT}",
                                timestamp=BASE_TS + i,
                            ),
                            archived=i < archived_until,
                        )
                        for i in range(session_size)
                    ],
                )
                await hand.messages.insert_many(
                    [hand.doc("hand-history", i, i < archived_until) for i in range(session_size)]
                )
                ours_h = await store.get_history("ours-history", 50)
                hand_h = await hand.history("hand-history")
                assert [m.content for m in ours_h] == [d["content"] for d in hand_h], (
                    "results differ"
                )

                async def ours_history() -> Any:
                    return await store.get_history("ours-history", 50)

                async def hand_history() -> Any:
                    return await hand.history("hand-history")

                stats = await interleaved(
                    {"ours": ours_history, "hand": hand_history},
                    rounds=3 if args.quick else 10,
                    calls_per_round=5,
                )
                rows.append(
                    [
                        f"get_history(50) of {session_size:,} (90 % archived)",
                        stats["ours"]["median_us"] / 1000,
                        stats["hand"]["median_us"] / 1000,
                    ]
                )

                # archive_span
                ours_ms, hand_ms = [], []
                for r in range(2 if args.quick else 3):
                    await store.import_messages(
                        f"ours-arch-{r}",
                        [
                            StoredMessage(
                                Message(role="user", content=f"{i} {TEXT}", timestamp=BASE_TS + i)
                            )
                            for i in range(2 * span)
                        ],
                    )
                    await hand.messages.insert_many(
                        [hand.doc(f"hand-arch-{r}", i) for i in range(2 * span)]
                    )
                    start = time.perf_counter()
                    assert await store.archive_span(f"ours-arch-{r}", span) == span
                    ours_ms.append((time.perf_counter() - start) * 1000)
                    start = time.perf_counter()
                    assert await hand.archive(f"hand-arch-{r}", span) == span
                    hand_ms.append((time.perf_counter() - start) * 1000)
                rows.append(
                    [
                        f"archive_span({span:,}) of {2 * span:,}",
                        statistics.median(ours_ms),
                        statistics.median(hand_ms),
                    ]
                )

                # commit_metadata
                batch = 0

                async def ours_commit() -> None:
                    nonlocal batch
                    batch += 1
                    await store.commit_metadata(
                        [
                            Put("bench", f"key-{i:04d}", {"batch": batch, "i": i, "text": TEXT})
                            for i in range(n_ops)
                        ]
                    )

                async def hand_commit() -> None:
                    nonlocal batch
                    batch += 1
                    await hand.commit(batch, n_ops)

                stats = await interleaved(
                    {"ours": ours_commit, "hand": hand_commit},
                    rounds=2 if args.quick else 5,
                    calls_per_round=1,
                    warmup=1,
                )
                rows.append(
                    [
                        f"commit_metadata({n_ops} puts)",
                        stats["ours"]["median_us"] / 1000,
                        stats["hand"]["median_us"] / 1000,
                    ]
                )
            finally:
                await client.drop_database(ours_db)
                await client.drop_database(hand_db)
                await client.close()
                await store.close()

    table = []
    for operation, ours_ms_v, hand_ms_v in rows:
        vs = ratio(ours_ms_v, hand_ms_v)
        report.row(
            operation=operation,
            memory_mongodb_ms=round(ours_ms_v, 3),
            pymongo_ms=round(hand_ms_v, 3),
            vs_pymongo=vs,
        )
        table.append([operation, round(ours_ms_v, 3), round(hand_ms_v, 3), vs])
        key = operation.split("(")[0].split(" ")[0]
        report.ratio(f"{key}_vs_pymongo", vs)
    print_table(
        f"memory-mongodb vs hand-written pymongo, median ms, on {report.data['server']['kind']}",
        ["operation", "memory-mongodb", "pymongo", "ours/pymongo"],
        table,
    )
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
