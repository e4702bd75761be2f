"""Conformance: the metadata key/value store (docs/reference/memory-contract.md)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from aalis_api_memory import Delete, FullMemoryService, MetadataEntry, MetadataOp, Put
from aalis_schema_message import now_ms

from aalis_api_memory_conformance._base import ConformanceBase
from aalis_api_memory_conformance._support import conformance, has, metadata_state


def _circular() -> dict[str, Any]:
    data: dict[str, Any] = {"a": 1}
    data["self"] = data
    return data


def _circular_list() -> dict[str, Any]:
    items: list[Any] = []
    items.append(items)
    return {"items": items}


#: Data every backend must refuse (TypeError or ValueError), writing nothing.
BAD_DATA: list[tuple[str, Any]] = [
    ("set", {"a": {1, 2}}),
    ("bytes", {"a": b"raw"}),
    ("nan", {"a": math.nan}),
    ("inf", {"a": [math.inf]}),
    ("circular", _circular()),
    ("circular-list", _circular_list()),
    ("int-key", {1: "a"}),
    ("none-key", {None: "a"}),
    ("tuple-key", {("a",): 1}),
    ("nested-int-key", {"a": {2: "b"}}),
    ("object", {"a": object()}),
    ("list-data", [1, 2]),
    ("str-data", '{"a": 1}'),
    ("none-data", None),
]

#: Values that must come back exactly as saved.
GOOD_DATA: list[tuple[str, dict[str, Any]]] = [
    ("empty", {}),
    ("scalars", {"s": "x", "i": -3, "f": 0.1, "t": True, "f2": False, "n": None}),
    ("nested", {"a": {"b": {"c": [1, [2, [3, {"d": []}]]]}}}),
    ("unicode", {"名前": "アリス", "emoji": "🙂", "rtl": "עברית", "mixed": "a\u0301"}),
    ("numbers", {"big": 2**53, "neg": -(2**53), "tiny": 5e-324, "huge": 1.7976931348623157e308}),
    ("whitespace", {" ": " ", "\t": "\n", "": ""}),
]


@conformance
class MetadataConformance(ConformanceBase):
    @pytest.mark.parametrize(("name", "data"), GOOD_DATA, ids=[name for name, _ in GOOD_DATA])
    async def test_data_round_trips(
        self, memory: FullMemoryService, name: str, data: dict[str, Any]
    ) -> None:
        await memory.save_metadata("ns", name, data)
        assert await memory.get_metadata("ns", name) == data
        [entry] = await memory.list_metadata("ns")
        assert entry.key == name
        assert entry.data == data

    async def test_missing_entry_reads_none(self, memory: FullMemoryService) -> None:
        assert await memory.get_metadata("ns", "missing") is None
        await memory.save_metadata("ns", "k", {"v": 1})
        assert await memory.get_metadata("ns", "other") is None
        assert await memory.get_metadata("other", "k") is None
        assert await memory.list_metadata("empty") == []

    async def test_save_overwrites_without_merging(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("ns", "k", {"a": 1, "b": {"c": 2}})
        await memory.save_metadata("ns", "k", {"b": {"d": 3}})
        assert await memory.get_metadata("ns", "k") == {"b": {"d": 3}}
        await memory.save_metadata("ns", "k", {})
        assert await memory.get_metadata("ns", "k") == {}

    async def test_mutating_saved_input_changes_nothing(self, memory: FullMemoryService) -> None:
        data: dict[str, Any] = {"list": [1, {"x": 1}], "inner": {"a": 1}}
        await memory.save_metadata("ns", "k", data)
        data["list"][1]["x"] = 2
        data["list"].append(3)
        data["inner"]["a"] = 9
        data["new"] = True
        ops_data: dict[str, Any] = {"v": [1]}
        await memory.commit_metadata([Put("ns", "batch", ops_data)])
        ops_data["v"].append(2)
        assert await memory.get_metadata("ns", "k") == {"list": [1, {"x": 1}], "inner": {"a": 1}}
        assert await memory.get_metadata("ns", "batch") == {"v": [1]}

    async def test_mutating_returned_data_changes_nothing(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("ns", "k", {"list": [1], "inner": {"a": 1}})
        got = await memory.get_metadata("ns", "k")
        assert got is not None
        got["list"].append(2)
        got["inner"]["a"] = 9
        got["new"] = 1
        [entry] = await memory.list_metadata("ns")
        entry.data["list"].append(3)
        entry.data["inner"]["b"] = 2
        assert await memory.get_metadata("ns", "k") == {"list": [1], "inner": {"a": 1}}
        assert (await memory.list_metadata("ns"))[0].data == {"list": [1], "inner": {"a": 1}}

    async def test_list_metadata_is_sorted_by_key_with_updated_at_in_ms(
        self, memory: FullMemoryService
    ) -> None:
        keys = ["b", "a", "aa", "B", "é", "z", "中", "a b", "10", "9", ""]
        before = now_ms()
        for key in keys:
            await memory.save_metadata("ns", key, {"key": key})
        after = now_ms()
        entries = await memory.list_metadata("ns")
        assert [entry.key for entry in entries] == sorted(keys)
        for entry in entries:
            assert isinstance(entry, MetadataEntry)
            assert entry.data == {"key": entry.key}
            assert isinstance(entry.updated_at, int)
            assert not isinstance(entry.updated_at, bool)
            assert before <= entry.updated_at <= after

    async def test_updated_at_moves_forward_on_overwrite(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("ns", "k", {"v": 1})
        [first] = await memory.list_metadata("ns")
        await memory.commit_metadata([Put("ns", "k", {"v": 2})])
        [second] = await memory.list_metadata("ns")
        assert second.updated_at >= first.updated_at
        assert second.data == {"v": 2}

    async def test_list_metadata_keys_is_sorted(self, memory: FullMemoryService) -> None:
        self.require(memory, "list_metadata_keys")
        for key in ["b", "a", "c", "A"]:
            await memory.save_metadata("ns", key, {})
        await memory.save_metadata("other", "x", {})
        assert await memory.list_metadata_keys("ns") == ["A", "a", "b", "c"]
        assert await memory.list_metadata_keys("nothing") == []

    async def test_namespaces_are_independent(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("a", "k", {"ns": "a"})
        await memory.save_metadata("b", "k", {"ns": "b"})
        await memory.save_metadata("a.b", "k", {"ns": "a.b"})
        await memory.delete_metadata("a", "k")
        assert await memory.get_metadata("a", "k") is None
        assert await memory.get_metadata("b", "k") == {"ns": "b"}
        assert [e.data for e in await memory.list_metadata("a.b")] == [{"ns": "a.b"}]

    async def test_delete_removes_and_missing_key_is_fine(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("ns", "k", {"v": 1})
        await memory.delete_metadata("ns", "k")
        assert await memory.get_metadata("ns", "k") is None
        await memory.delete_metadata("ns", "k")
        await memory.delete_metadata("never", "was")
        assert await memory.list_metadata("ns") == []

    async def test_empty_namespace_and_key_are_valid(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("", "", {"v": "empty"})
        assert await memory.get_metadata("", "") == {"v": "empty"}
        assert [e.key for e in await memory.list_metadata("")] == [""]

    # -- commit_metadata ------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("ops", "expected"),
        [
            ([Put("ns", "k", {"v": 1}), Delete("ns", "k")], None),
            ([Delete("ns", "k"), Put("ns", "k", {"v": 2})], {"v": 2}),
            ([Put("ns", "k", {"v": 1}), Put("ns", "k", {"v": 3})], {"v": 3}),
            ([Put("ns", "k", {"v": 1}), Delete("ns", "k"), Put("ns", "k", {"v": 4})], {"v": 4}),
            ([Delete("ns", "k"), Delete("ns", "k")], None),
            ([], {"v": 0}),
        ],
        ids=["put-delete", "delete-put", "put-put", "put-delete-put", "delete-twice", "empty"],
    )
    async def test_commit_applies_ops_in_order(
        self, memory: FullMemoryService, ops: list[Any], expected: dict[str, Any] | None
    ) -> None:
        await memory.save_metadata("ns", "k", {"v": 0})
        await memory.commit_metadata(ops)
        assert await memory.get_metadata("ns", "k") == expected

    async def test_commit_spans_namespaces(self, memory: FullMemoryService) -> None:
        await memory.save_metadata("a", "gone", {"v": 0})
        await memory.commit_metadata(
            (Put("a", "x", {"v": 1}), Put("b", "x", {"v": 2}), Delete("a", "gone"))
        )
        assert await memory.get_metadata("a", "x") == {"v": 1}
        assert await memory.get_metadata("b", "x") == {"v": 2}
        assert await memory.get_metadata("a", "gone") is None

    async def test_commit_of_many_ops(self, memory: FullMemoryService) -> None:
        await memory.commit_metadata([Put("ns", f"k{i:03}", {"i": i}) for i in range(500)])
        entries = await memory.list_metadata("ns")
        assert [e.data["i"] for e in entries] == list(range(500))

    @pytest.mark.parametrize(("name", "data"), BAD_DATA, ids=[name for name, _ in BAD_DATA])
    async def test_commit_with_bad_data_applies_nothing(
        self, memory: FullMemoryService, name: str, data: Any
    ) -> None:
        await memory.save_metadata("ns", "existing", {"v": "old"})
        await memory.save_metadata("ns", "doomed", {"v": "still here"})
        before = await metadata_state(memory, "ns")
        ops: list[MetadataOp] = [
            Put("ns", "existing", {"v": "new"}),
            Delete("ns", "doomed"),
            Put("ns", "fresh", {"v": 1}),
            Put("ns", "bad", data),
            Put("ns", "after", {"v": 2}),
        ]
        with pytest.raises((TypeError, ValueError)):
            await memory.commit_metadata(ops)
        assert await metadata_state(memory, "ns") == before

    @pytest.mark.parametrize(
        "bad_op",
        [("put", "ns", "k", {}), Put(1, "k", {}), Put("ns", None, {}), Delete(b"ns", "k"), None],  # type: ignore[arg-type]
        ids=["tuple", "int-namespace", "none-key", "bytes-namespace", "none"],
    )
    async def test_commit_with_a_bad_op_applies_nothing(
        self, memory: FullMemoryService, bad_op: Any
    ) -> None:
        await memory.save_metadata("ns", "existing", {"v": "old"})
        before = await metadata_state(memory, "ns")
        with pytest.raises(TypeError):
            await memory.commit_metadata([Put("ns", "existing", {"v": "new"}), bad_op])
        assert await metadata_state(memory, "ns") == before

    @pytest.mark.parametrize("ops", ["not ops", b"raw", {"ns": "k"}, 5, None])
    async def test_commit_refuses_a_non_sequence(self, memory: FullMemoryService, ops: Any) -> None:
        with pytest.raises(TypeError):
            await memory.commit_metadata(ops)

    @pytest.mark.parametrize(("name", "data"), BAD_DATA, ids=[name for name, _ in BAD_DATA])
    async def test_save_with_bad_data_changes_nothing(
        self, memory: FullMemoryService, name: str, data: Any
    ) -> None:
        await memory.save_metadata("ns", "k", {"v": "old"})
        with pytest.raises((TypeError, ValueError)):
            await memory.save_metadata("ns", "k", data)
        with pytest.raises((TypeError, ValueError)):
            await memory.save_metadata("ns", "new", data)
        assert await memory.get_metadata("ns", "k") == {"v": "old"}
        assert await memory.get_metadata("ns", "new") is None

    # -- unreadable entries (need the backend's corrupt_metadata hook) --------------------

    @pytest.mark.parametrize(
        "raw",
        ["{not json", "[1, 2]", "42", "null", '"text"', ""],
        ids=["broken", "array", "number", "null", "string", "empty"],
    )
    async def test_unreadable_entries(self, memory: FullMemoryService, raw: str) -> None:
        await memory.save_metadata("ns", "a", {"v": "a"})
        await memory.save_metadata("ns", "c", {"v": "c"})
        await self.write_raw_metadata(memory, "ns", "b", raw)
        assert await memory.get_metadata("ns", "b") is None  # reads as None (and logs)
        assert [entry.key for entry in await memory.list_metadata("ns")] == ["a", "c"]
        if has(memory, "list_metadata_keys"):
            assert await memory.list_metadata_keys("ns") == ["a", "b", "c"]
        await memory.save_metadata("ns", "b", {"v": "fixed"})
        assert await memory.get_metadata("ns", "b") == {"v": "fixed"}

    async def test_unreadable_entries_can_be_deleted(self, memory: FullMemoryService) -> None:
        await self.write_raw_metadata(memory, "ns", "one", "{broken")
        await self.write_raw_metadata(memory, "ns", "two", "[]")
        await memory.delete_metadata("ns", "one")
        await memory.commit_metadata([Delete("ns", "two")])
        assert await memory.get_metadata("ns", "one") is None
        if has(memory, "list_metadata_keys"):
            assert await memory.list_metadata_keys("ns") == []

    # -- namespaces -----------------------------------------------------------------------

    async def test_list_namespaces(self, memory: FullMemoryService) -> None:
        self.require(memory, "list_namespaces")
        assert await memory.list_namespaces() == []
        for namespace in ["summary", "a", "Z", "a.b", ""]:
            await memory.save_metadata(namespace, "k", {})
        await memory.commit_metadata([Put("batch", "k", {})])
        assert await memory.list_namespaces() == sorted(["summary", "a", "Z", "a.b", "", "batch"])
        await memory.delete_metadata("a", "k")
        await memory.commit_metadata([Delete("batch", "k")])
        assert await memory.list_namespaces() == sorted(["summary", "Z", "a.b", ""])

    async def test_messages_do_not_create_namespaces(self, memory: FullMemoryService) -> None:
        self.require(memory, "list_namespaces")
        from aalis_api_memory_conformance._support import msg

        await memory.save_message("s", msg("x", ts=0))
        assert await memory.list_namespaces() == []


__all__ = ["BAD_DATA", "GOOD_DATA", "MetadataConformance"]
