"""The memory contract's conformance kit, run against MongoMemory on the test server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from aalis_api_memory_conformance import MemoryServiceConformance
from aalis_plugin_memory_mongodb import MongoConfig, MongoMemory
from aalis_plugin_memory_mongodb._codec import escape_str


class TestMongoConformance(MemoryServiceConformance):
    implements = "all"

    @pytest_asyncio.fixture
    async def memory(self, mongo_config: MongoConfig) -> AsyncIterator[MongoMemory]:
        store = await MongoMemory.connect(mongo_config)
        try:
            yield store
        finally:
            await store.close()

    async def corrupt_metadata(
        self, memory: MongoMemory, namespace: str, key: str, raw_text: str
    ) -> None:
        # A document store has no "text" column: JSON text becomes the value it denotes
        # (an array, a number, null, a string), anything else is stored as the string itself.
        # Neither is an object, so both are unreadable entries.
        try:
            data: Any = json.loads(raw_text)
        except ValueError:
            data = raw_text
        await memory._metadata.replace_one(
            {"namespace": escape_str(namespace), "key": escape_str(key)},
            {
                "namespace": escape_str(namespace),
                "key": escape_str(key),
                "data": data,
                "updated_at": 0,
            },
            upsert=True,
        )
