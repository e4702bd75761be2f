"""Metadata on MongoDB: overwrite, listings, unreadable entries, the atomic-enough batch."""

from __future__ import annotations

import math

import pytest
from aalis_api_memory import Delete, Put


async def test_save_get_overwrite_delete(memory):
    assert await memory.get_metadata("ns", "k") is None
    await memory.save_metadata("ns", "k", {"a": 1, "nested": {"b": [1, 2]}})
    await memory.save_metadata("ns", "k", {"c": True})  # overwrite, no merge
    assert await memory.get_metadata("ns", "k") == {"c": True}
    assert (await memory.get_metadata("ns", "k"))["c"] is True
    await memory.delete_metadata("ns", "k")
    await memory.delete_metadata("ns", "k")  # missing is not an error
    assert await memory.get_metadata("ns", "k") is None


async def test_stored_values_are_copies(memory):
    data = {"list": [1, 2], "inner": {"x": 1}}
    await memory.save_metadata("ns", "k", data)
    data["list"].append(3)
    data["inner"]["x"] = 2
    got = await memory.get_metadata("ns", "k")
    assert got == {"list": [1, 2], "inner": {"x": 1}}
    got["list"].append(9)
    assert await memory.get_metadata("ns", "k") == {"list": [1, 2], "inner": {"x": 1}}


async def test_list_metadata_sorted_with_updated_at(memory):
    for key in ("b", "a", "c"):
        await memory.save_metadata("ns", key, {"k": key})
    await memory.save_metadata("other", "z", {})
    entries = await memory.list_metadata("ns")
    assert [(e.key, e.data) for e in entries] == [
        ("a", {"k": "a"}),
        ("b", {"k": "b"}),
        ("c", {"k": "c"}),
    ]
    assert all(isinstance(e.updated_at, int) and e.updated_at > 1_600_000_000_000 for e in entries)
    assert await memory.list_metadata_keys("ns") == ["a", "b", "c"]
    assert await memory.list_namespaces() == ["ns", "other"]


async def test_unreadable_entries(memory, raw_db, mongo_config):
    await memory.save_metadata("ns", "good", {"v": 1})
    coll = raw_db[f"{mongo_config.collection_prefix}metadata"]
    coll.insert_one({"namespace": "ns", "key": "list", "data": [1, 2], "updated_at": 1})
    coll.insert_one({"namespace": "ns", "key": "text", "data": "{not json", "updated_at": 1})
    coll.insert_one(
        {"namespace": "ns", "key": "bad-marker", "data": {"x": {"%int": "nope"}}, "updated_at": 1}
    )
    assert [e.key for e in await memory.list_metadata("ns")] == ["good"]
    assert await memory.list_metadata_keys("ns") == ["bad-marker", "good", "list", "text"]
    from aalis_core.testing import capture_logs

    with capture_logs() as logs:
        assert await memory.get_metadata("ns", "list") is None
    [line] = [line for line in logs.lines if line["level"] == "warning"]
    assert line["namespace"] == "ns"
    assert line["key"] == "list"


async def test_commit_metadata_applies_in_order(memory):
    await memory.save_metadata("ns", "old", {"v": 0})
    await memory.commit_metadata(
        [
            Put("ns", "a", {"v": 1}),
            Put("ns", "a", {"v": 2}),
            Delete("ns", "old"),
            Delete("ns", "missing"),
            Put("other", "b", {"v": 3}),
            Delete("other", "b"),
            Put("other", "b", {"v": 4}),
        ]
    )
    assert [(e.key, e.data) for e in await memory.list_metadata("ns")] == [("a", {"v": 2})]
    assert await memory.get_metadata("other", "b") == {"v": 4}
    await memory.commit_metadata([])
    await memory.commit_metadata(iter([Delete("other", "b")]))
    assert await memory.get_metadata("other", "b") is None


@pytest.mark.parametrize(
    "bad",
    [
        {"s": {1, 2}},
        {"b": b"bytes"},
        {"n": math.nan},
        {"i": math.inf},
        {1: "int key"},
        ["not", "a", "dict"],
        "text",
    ],
)
async def test_commit_metadata_with_bad_data_applies_nothing(memory, bad):
    await memory.save_metadata("ns", "keep", {"v": 0})
    with pytest.raises((TypeError, ValueError)):
        await memory.commit_metadata(
            [Put("ns", "first", {"ok": 1}), Delete("ns", "keep"), Put("ns", "bad", bad)]
        )
    assert [(e.key, e.data) for e in await memory.list_metadata("ns")] == [("keep", {"v": 0})]


async def test_commit_metadata_circular_data_applies_nothing(memory):
    circular: dict = {}
    circular["self"] = circular
    with pytest.raises(ValueError, match=r"(?i)circular|nested too deeply"):
        await memory.commit_metadata([Put("ns", "first", {"ok": 1}), Put("ns", "bad", circular)])
    assert await memory.list_metadata_keys("ns") == []


async def test_commit_metadata_too_large_for_bson_applies_nothing(memory):
    huge = {"blob": "x" * (17 * 1024 * 1024)}
    with pytest.raises(ValueError, match="16777216"):
        await memory.commit_metadata([Put("ns", "first", {"ok": 1}), Put("ns", "huge", huge)])
    assert await memory.list_metadata_keys("ns") == []


async def test_commit_metadata_refuses_non_ops(memory):
    with pytest.raises(TypeError):
        await memory.commit_metadata([Put("ns", "a", {}), ("ns", "b")])
    with pytest.raises(TypeError):
        await memory.commit_metadata(Put("ns", "a", {}))
    with pytest.raises(TypeError):
        await memory.commit_metadata([Put("ns", 1, {})])
    assert await memory.list_namespaces() == []


async def test_awkward_json_round_trips(memory):
    data = {
        "a.b": 1,
        "$set": {"$gt": 2, "x.y.z": [{"$where": "1"}]},
        "%": "%25",
        "%int": "not a marker",
        "%json": {"%": 1},
        "nul\x00key": None,
        "": "empty key",
        "big": 2**70,
        "neg": -(2**80),
        "edge": [2**63 - 1, -(2**63), 2**63, 1.0, -0.0, 1e308],
        "unicode": "会话 😀 \u2028",
        "bools": [True, False, 0, 1],
    }
    await memory.save_metadata("ns", "k", data)
    got = await memory.get_metadata("ns", "k")
    assert got == data
    assert got["bools"][0] is True
    assert got["bools"][2] == 0
    assert got["bools"][2] is not False
    assert isinstance(got["edge"][3], float)
    assert [e.data for e in await memory.list_metadata("ns")] == [data]


async def test_deep_nesting_round_trips(memory):
    deep: dict = {"leaf": [1, {"x.y": 2**64}]}
    for i in range(300):
        deep = {f"level{i}": deep}
    await memory.save_metadata("ns", "deep", deep)
    assert await memory.get_metadata("ns", "deep") == deep
