from collections.abc import AsyncIterator

import pytest_asyncio
from aalis_api_relation import InMemoryRelation, PersonRef, Statement
from aalis_api_relation_conformance import RelationConformance


class _Harness:
    def __init__(self) -> None:
        self.service = InMemoryRelation()
        self._clock = 1_000
        self._ids = 0

    async def teach(self, session_id: str, person: PersonRef, attribute: str, value: str) -> str:
        self._clock += 1000
        self._ids += 1
        source = f"m{self._ids}"
        await self.service.tell(
            Statement(
                person=person,
                attribute=attribute,
                value=value,
                text=f"{attribute} {value}",
                at=self._clock,
                source=source,
                session_id=session_id,
            )
        )
        return source

    async def unsay(self, session_id: str, message_id: str) -> None:
        await self.service.messages_deleted([message_id])


class TestInMemoryRelation(RelationConformance):
    @pytest_asyncio.fixture
    async def harness(self) -> AsyncIterator[_Harness]:
        yield _Harness()
