"""The same agent, turn for turn, on each framework's built-in store and on Aalis.

For each of five frameworks, one scripted conversation (``--turns`` turns, 20 by default:
the user names a city and a day, a scripted model answers) runs twice through the
framework itself: once on its own store, once on the Aalis adapter over one SQLite store.
Then it prints what each side shows: the built-in's rows, and for Aalis what the real
``aalis history`` prints, the archive after ``aalis compress``, and what ``aalis clear
--session`` removes. docs/integrations/side-by-side.md pastes this script's output;
tests/examples/test_side_by_side.py runs it with ``--turns 4`` so that page cannot rot.

Run from the repository root: ``.venv/bin/python examples/side_by_side.py``. Offline: no
model, no key (scripted models: the SDKs' own test models where they ship them).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import sqlite3
import sys
import tempfile
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

#: The Aalis plugins of this comparison: the store, compression, the CLI, the LangGraph clear.
PLUGINS = "memory-sqlite,memory-summary,memory-cli,langgraph"


def question(i: int) -> str:
    return f"Turn {i}: I will be in city {i % 5} on day {i}, note it."


def answer(i: int) -> str:
    return f"Noted: city {i % 5} on day {i}."


def rows(db: Path, table: str, where: str = "") -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table} {where}").fetchone()[0])


class Aalis:
    """One Aalis host over one SQLite file, and the real ``aalis`` commands on it."""

    def __init__(self, work: Path) -> None:
        from aalis_agent import SyncHost

        config = work / "aalis.toml"
        config.write_text(
            f'[host]\ndata_dir = "{(work / "aalis").as_posix()}"\nlog_level = "warning"\n\n'
            '[capabilities.memory]\nprovider = "memory-sqlite"\n',
            encoding="utf-8",
        )
        os.environ["AALIS_CONFIG"] = str(config)
        os.environ["AALIS_LOAD_PLUGINS"] = PLUGINS
        self.host = SyncHost.from_config(config)

    def cli(self, *args: str) -> str:
        """What ``aalis <args>`` prints (the real command, in this process)."""
        from click.testing import CliRunner

        from aalis_core import cli

        result = CliRunner().invoke(cli, list(args))
        if result.exit_code != 0:
            raise RuntimeError(f"aalis {' '.join(args)} failed: {result.output}")
        return result.stdout.rstrip()

    def report(self, session: str) -> list[str]:
        """History, compression, archive and clear of one Aalis session."""
        memory = self.host.memory
        shown = self.cli("history", session, "-n", "all").splitlines()
        out = [f"aalis history {session}: {len(shown)} lines, the last: {shown[-1]}"]
        compressed = self.cli("compress", session).splitlines()
        out.append(f"aalis compress {session}: {compressed[0] if compressed else ''}")
        full = memory.get_full_history(session, math.inf)
        active = memory.count_history(session)
        out.append(f"  archive: {len(full)} messages kept in full, {active} still active")
        head = self.cli("history", session, "-n", "2").splitlines()
        out.append(f"  aalis history {session} -n 2 now starts: {head[0][:90]}")
        cleared = self.cli("clear", "--session", session, "--yes").splitlines()
        out.append(f"aalis clear --session {session}:")
        out.extend(f"  {line}" for line in cleared)
        left = len(memory.get_full_history(session, math.inf))
        out.append(f"  after the clear: {left} messages in the history")
        return out

    def close(self) -> None:
        self.host.close()


# -- OpenAI Agents SDK --------------------------------------------------------------------


def openai_agents(aalis: Aalis, work: Path, turns: int) -> list[str]:
    from aalis_openai_agents import AalisSession
    from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message

    set_tracing_disabled(True)

    def run(session: Any) -> None:
        model = ScriptedModel([[assistant_message(answer(i))] for i in range(turns)])
        agent = Agent(name="assistant", instructions="Be brief.", model=model)
        for i in range(turns):
            Runner.run_sync(agent, question(i), session=session)

    db = work / "agents.db"
    builtin = SQLiteSession("trip", db_path=db)
    run(builtin)
    out = [f"built-in  SQLiteSession(db_path=agents.db): {rows(db, 'agent_messages')} rows"]
    asyncio.run(builtin.clear_session())
    out.append(f"          clear_session(): {rows(db, 'agent_messages')} rows left")
    run(AalisSession("trip-agents", aalis.host))
    return out + aalis.report("trip-agents")


# -- LangGraph ------------------------------------------------------------------------------


def _graph(saver: Any, turns: int) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    model = GenericFakeChatModel(messages=iter(AIMessage(answer(i)) for i in range(turns)))

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=saver)


def langgraph(aalis: Aalis, work: Path, turns: int) -> list[str]:
    from aalis_langgraph import AalisSaver, thread_namespace
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    def run(graph: Any, thread: str) -> None:
        for i in range(turns):
            config = {"configurable": {"thread_id": thread}}
            graph.invoke({"messages": [HumanMessage(question(i))]}, config)

    db = work / "langgraph.db"
    with sqlite3.connect(db, check_same_thread=False) as conn:
        builtin = SqliteSaver(conn)
        run(_graph(builtin, turns), "trip")
        out = [
            f"built-in  SqliteSaver(langgraph.db): {rows(db, 'checkpoints')} checkpoints, "
            f"{rows(db, 'writes')} writes rows; the messages are inside serialized blobs"
        ]
        builtin.delete_thread("trip")
        out.append(f"          delete_thread(): {rows(db, 'checkpoints')} checkpoints left")
    saver = AalisSaver(aalis.host)
    run(_graph(saver, turns), "trip-langgraph")
    saver.flush()  # the history copy is made behind the puts; this waits for the last one
    space = thread_namespace("trip-langgraph")
    entries = len(aalis.host.memory.list_metadata(space))
    out.append(f"aalis     AalisSaver: {entries} metadata entries in {space}")
    out += aalis.report("trip-langgraph")
    left = len(aalis.host.memory.list_metadata(space))
    out.append(f"  after the clear: {left} metadata entries in {space}")
    return out


# -- Pydantic AI ----------------------------------------------------------------------------


def pydantic_ai(aalis: Aalis, work: Path, turns: int) -> list[str]:
    from aalis_pydantic_ai import AalisHistory
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def agent() -> Any:
        replies = iter(answer(i) for i in range(turns))
        return Agent(FunctionModel(lambda m, info: ModelResponse(parts=[TextPart(next(replies))])))

    # Built-in: the app keeps result.all_messages() and persists it itself (a JSON file here).
    bot, kept = agent(), list[Any]()
    for i in range(turns):
        kept = bot.run_sync(question(i), message_history=kept).all_messages()
    file = work / "pydantic-ai.json"
    file.write_bytes(ModelMessagesTypeAdapter.dump_json(kept))
    out = [
        f"built-in  result.all_messages() kept by the app: {len(kept)} ModelMessages "
        f"({file.stat().st_size} bytes as JSON); clearing is the app's `del`"
    ]
    history = AalisHistory("trip-pydantic", aalis.host)
    bot = agent()
    for i in range(turns):
        result = bot.run_sync(question(i), message_history=history.load_sync())
        history.save_sync(result.new_messages())
    return out + aalis.report("trip-pydantic")


# -- LlamaIndex -----------------------------------------------------------------------------


async def _llamaindex_turns(store: Any, session: str, turns: int) -> Any:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory

    memory = Memory.from_defaults(
        session_id=session, chat_store=store, token_limit=400, chat_history_token_ratio=0.5
    )
    for i in range(turns):
        await memory.aput(ChatMessage(role="user", content=question(i)))
        await memory.aget()  # what the agent reads each turn: over budget, Memory archives
        await memory.aput(ChatMessage(role="assistant", content=answer(i)))
    return memory


def llamaindex(aalis: Aalis, work: Path, turns: int) -> list[str]:
    from aalis_llamaindex import AalisDBChatStore
    from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore

    db = work / "llamaindex.db"

    async def builtin() -> list[str]:
        store = SQLAlchemyChatStore(
            table_name="memory", async_database_uri=f"sqlite+aiosqlite:///{db}"
        )
        memory = await _llamaindex_turns(store, "trip", turns)
        active = rows(db, "memory", "WHERE status = 'active'")
        archived = rows(db, "memory", "WHERE status = 'archived'")
        done = [
            f"built-in  Memory on SQLAlchemyChatStore(llamaindex.db): {active} active rows, "
            f"{archived} archived rows"
        ]
        await memory.areset()
        done.append(f"          Memory.areset(): {rows(db, 'memory')} rows left")
        return done

    out = asyncio.run(builtin())
    asyncio.run(_llamaindex_turns(AalisDBChatStore(aalis.host), "trip-llamaindex", turns))
    return out + aalis.report("trip-llamaindex")


# -- Google ADK -----------------------------------------------------------------------------


def _adk_model(turns: int) -> Any:
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    replies = iter(answer(i) for i in range(turns))

    class Scripted(BaseLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            text = next(replies)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))

    return Scripted(model="scripted")


async def _adk_turns(service: Any, session: str, turns: int) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.genai import types

    agent = LlmAgent(name="assistant", model=_adk_model(turns))
    runner = Runner(app_name="trip", agent=agent, session_service=service)
    await service.create_session(app_name="trip", user_id="ada", session_id=session)
    for i in range(turns):
        message = types.Content(role="user", parts=[types.Part(text=question(i))])
        async for _ in runner.run_async(user_id="ada", session_id=session, new_message=message):
            pass


def google_adk(aalis: Aalis, work: Path, turns: int) -> list[str]:
    # ADK warns at every scripted reply that it carries no token counts: noise here.
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    from aalis_google_adk import AalisSessionService, aalis_session_id
    from google.adk.sessions import DatabaseSessionService, InMemorySessionService

    db = work / "adk.db"

    async def builtins() -> list[str]:
        memory = InMemorySessionService()
        await _adk_turns(memory, "s1", turns)
        got = await memory.get_session(app_name="trip", user_id="ada", session_id="s1")
        database = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{db}")
        await _adk_turns(database, "s1", turns)
        done = [
            f"built-in  InMemorySessionService: {len(got.events) if got else 0} events "
            "(gone with the process)",
            f"          DatabaseSessionService(adk.db): {rows(db, 'events')} event rows",
        ]
        await database.delete_session(app_name="trip", user_id="ada", session_id="s1")
        done.append(f"          delete_session(): {rows(db, 'events')} event rows left")
        return done

    out = asyncio.run(builtins())
    asyncio.run(_adk_turns(AalisSessionService(aalis.host), "s1", turns))
    return out + aalis.report(aalis_session_id("trip", "ada", "s1"))


FRAMEWORKS: list[tuple[str, Callable[[Aalis, Path, int], list[str]]]] = [
    ("OpenAI Agents SDK: SQLiteSession vs AalisSession", openai_agents),
    ("LangGraph: SqliteSaver vs AalisSaver", langgraph),
    ("Pydantic AI: the app's message list vs AalisHistory", pydantic_ai),
    ("LlamaIndex: Memory on SQLAlchemyChatStore vs on AalisDBChatStore", llamaindex),
    ("Google ADK: InMemory/DatabaseSessionService vs AalisSessionService", google_adk),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="turns per agent (default 20)")
    args = parser.parse_args(argv)
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    with tempfile.TemporaryDirectory(prefix="aalis-side-by-side-") as scratch:
        work = Path(scratch)
        aalis = Aalis(work)
        try:
            for title, run in FRAMEWORKS:
                print(f"== {title} ({args.turns} turns)")
                for line in run(aalis, work, args.turns):
                    print(line)
                print()
        finally:
            aalis.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
