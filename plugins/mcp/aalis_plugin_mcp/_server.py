"""The MCP server: Aalis memory as MCP tools, on the official SDK's ``MCPServer``.

Which tools exist is decided once, when the server is built: reading tools always;
``search_recall`` when a ``recall`` provider is bound; ``get_facts`` when a ``relation``
provider (the fact layer, user-relation) is bound; writing and clearing tools only when
``[plugins.mcp]`` enables them. A client that calls a write tool that is off gets an error
saying how to turn it on, not a bare "unknown tool".

The client is usually a model acting on its own, so even enabled writes stop where privacy
starts (docs/integrations/mcp.md): a model saves only ``user`` and ``assistant`` messages,
and never writes or deletes in the namespaces of memory-vector (where recall scopes live),
memory-summary or the fact layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aalis_agent import run_clear, save_conversation
from aalis_api_memory import (
    FullHistory,
    MemoryService,
    MetadataEntry,
    SessionInfo,
    Transfer,
    supports,
)
from aalis_schema_message import Message
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from aalis_core import Capability, HostServices
from aalis_plugin_mcp._config import McpConfig

if TYPE_CHECKING:
    from aalis_core import Handle

#: The ``recall`` capability by name: its contract (semantic recall) may not be installed,
#: and the host binds capabilities by name, so the server works with or without it.
RECALL: Capability[Any] = Capability("recall", object)
#: The ``relation`` capability (facts about people, docs/host/facts.md), by name likewise.
RELATION: Capability[Any] = Capability("relation", object)

READ_TOOLS = ("list_sessions", "get_history", "get_metadata", "list_metadata")
RECALL_TOOLS = ("search_recall",)
RELATION_TOOLS = ("get_facts",)
WRITE_TOOLS = ("save_message", "save_metadata", "delete_metadata")
CLEAR_TOOLS = ("clear_session",)

#: Roles a model may write through ``save_message``: a ``system`` message (or a tool result
#: without its call) saved by a model would instruct every later prompt of the session.
WRITABLE_ROLES = ("user", "assistant")
#: Metadata namespaces of derived layers, read-only over MCP: memory-vector (recall scopes,
#: gaps), memory-summary (``summary``, ``summary-lines``, ``summary-pending``) and the fact
#: layer (user-relation). Each name covers itself and every ``NAME.x`` and ``NAME-x``.
PROTECTED_NAMESPACES = ("memory-vector", "memory-summary", "summary", "user-relation")


def is_protected_namespace(namespace: str) -> bool:
    """Whether ``namespace`` belongs to a layer whose data no model may write or delete."""
    return any(
        namespace == name or namespace.startswith((f"{name}.", f"{name}-"))
        for name in PROTECTED_NAMESPACES
    )


class AalisMcpServer(MCPServer[Any]):
    """``MCPServer`` that explains why a tool switched off in the config is missing."""

    def __init__(self, *args: Any, disabled: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._disabled = dict(disabled)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        reason = self._disabled.get(name)
        if reason is not None:
            raise ToolError(f"tool {name!r} is disabled: {reason}")
        return await super().call_tool(name, arguments, context)


def _session(info: SessionInfo) -> dict[str, Any]:
    return {
        "session_id": info.session_id,
        "active": info.active,
        "archived": info.archived,
        "last_timestamp": info.last_timestamp,
    }


def _entry(entry: MetadataEntry) -> dict[str, Any]:
    return {"key": entry.key, "data": dict(entry.data), "updated_at": entry.updated_at}


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ToolError(f"{what} must be a non-empty string")
    return value


def _writable(namespace: Any) -> str:
    """``namespace`` when a model may write it; a layer's own namespace is refused (a model
    that rewrote memory-vector's session overrides could widen a recall scope)."""
    name = _text(namespace, "namespace")
    if is_protected_namespace(name):
        prefix = next(p for p in PROTECTED_NAMESPACES if name == p or name.startswith(p))
        owner = "memory-summary" if prefix == "summary" else prefix
        raise ToolError(
            f"namespace {name!r} is read-only over MCP: it belongs to {owner} (recall "
            "scopes, summaries and facts are changed by their own commands, never by a model)"
        )
    return name


def build_server(
    host: HostServices,
    memory: Handle[MemoryService],
    config: McpConfig,
    *,
    compression: Any = None,
    recall: Any = None,
    relation: Any = None,
) -> AalisMcpServer:
    """The server over ``memory`` (a handle), ``compression``, ``recall`` and ``relation``
    handles."""
    disabled: dict[str, str] = {}
    if not config.allow_write:
        for name in WRITE_TOOLS:
            disabled[name] = "set allow_write = true in [plugins.mcp] to enable it"
    if not config.allow_clear:
        for name in CLEAR_TOOLS:
            disabled[name] = "set allow_clear = true in [plugins.mcp] to enable it"
    recall_present = recall is not None and bool(recall.present)
    if not recall_present:
        disabled["search_recall"] = "no recall provider is active (install memory-vector)"
    relation_present = relation is not None and bool(relation.present)
    if not relation_present:
        disabled["get_facts"] = "no relation provider is active (install user-relation)"
    server = AalisMcpServer(
        "aalis",
        instructions=(
            "Aalis memory: conversation sessions, their history and summaries, metadata"
            + (", semantic recall" if recall_present else "")
            + (", facts about people" if relation_present else "")
            + "."
        ),
        disabled=disabled,
    )

    def service() -> MemoryService:
        return memory.use  # CapabilityAbsent names the capability and the consumer

    async def list_sessions() -> dict[str, Any]:
        """Every session, newest first, with its active and archived message counts."""
        mem = service()
        if not supports(mem, Transfer, "list_sessions"):
            raise ToolError("this memory provider cannot list sessions")
        return {"sessions": [_session(info) for info in await mem.list_sessions()]}

    async def get_history(
        session_id: str, limit: int | None = None, include_archived: bool = False
    ) -> dict[str, Any]:
        """The last ``limit`` conversation messages of a session, oldest first, and its
        summary. With ``include_archived``, archived messages (compressed away) too."""
        sid = _text(session_id, "session_id")
        wanted = config.default_history_limit if limit is None else limit
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 0:
            raise ToolError(f"limit must be a non-negative integer, got {limit!r}")
        wanted = min(wanted, config.max_history_limit)
        mem = service()
        if include_archived:
            if not supports(mem, FullHistory, "get_full_history"):
                raise ToolError("this memory provider keeps no archived history")
            messages: list[Message] = await mem.get_full_history(sid, wanted)
        else:
            messages = await mem.get_history(sid, wanted)
        summary = None
        if compression is not None and compression.present:
            try:
                record = await compression.use.summary(sid)
            except Exception:
                record = None
            summary = record.text if record is not None else None
        return {
            "session_id": sid,
            "summary": summary,
            "messages": [m.to_json() for m in messages],
        }

    async def get_metadata(namespace: str, key: str) -> dict[str, Any]:
        """One metadata entry (``data`` is null when there is none)."""
        data = await service().get_metadata(_text(namespace, "namespace"), _text(key, "key"))
        return {"namespace": namespace, "key": key, "data": data}

    async def list_metadata(namespace: str) -> dict[str, Any]:
        """Every readable entry of a metadata namespace, sorted by key."""
        entries = await service().list_metadata(_text(namespace, "namespace"))
        return {"namespace": namespace, "entries": [_entry(e) for e in entries]}

    async def search_recall(session_id: str, query: str, k: int = 5) -> dict[str, Any]:
        """Earlier messages semantically close to ``query``, in the session's recall scope."""
        if recall is None or not recall.present:
            raise ToolError("no recall provider is active")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ToolError(f"k must be a positive integer, got {k!r}")
        hits = await recall.use.recall(_text(session_id, "session_id"), _text(query, "query"), k=k)
        return {
            "hits": [
                {
                    "session_id": hit.session_id,
                    "score": float(hit.score),
                    "source": getattr(hit, "source", None),
                    "message": hit.message.to_json(),
                    "neighbours": [m.to_json() for m in getattr(hit, "neighbours", ()) or ()],
                }
                for hit in hits
            ]
        }

    async def get_facts(
        session_id: str, query: str | None = None, limit: int = 10
    ) -> dict[str, Any]:
        """What is known about the people of a session: their current facts (value, the
        sentence it came from, source message ids), in the fact layer's scope, the ones
        relevant to ``query`` first. Read-only: facts are corrected with ``aalis facts``."""
        if relation is None or not relation.present:
            raise ToolError("no relation provider is active")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise ToolError(f"limit must be a positive integer, got {limit!r}")
        if query is not None:
            query = _text(query, "query")
        facts = await relation.use.about(_text(session_id, "session_id"), query, limit=limit)
        return {"facts": [fact.to_json() for fact in facts]}

    async def save_message(session_id: str, role: str, content: str) -> dict[str, Any]:
        """Append a ``user`` or ``assistant`` message to a session (announced, so indexes
        follow)."""
        sid = _text(session_id, "session_id")
        if role not in WRITABLE_ROLES:
            raise ToolError(
                f"role must be 'user' or 'assistant', got {role!r}: a model may not write "
                "system or tool messages over MCP"
            )
        message = Message(role=role, content=content, metadata={"platform": config.platform})
        (saved,) = await save_conversation(service(), sid, [message], host=host)
        return {"session_id": sid, "message": saved.to_json()}

    async def save_metadata(namespace: str, key: str, data: dict[str, Any]) -> dict[str, Any]:
        """Overwrite one metadata entry with a JSON object. The namespaces of memory-vector,
        memory-summary (``summary*``) and user-relation are read-only."""
        if not isinstance(data, dict):
            raise ToolError("data must be a JSON object")
        await service().save_metadata(_writable(namespace), _text(key, "key"), data)
        return {"namespace": namespace, "key": key, "saved": True}

    async def delete_metadata(namespace: str, key: str) -> dict[str, Any]:
        """Delete one metadata entry (a missing one is not an error). The namespaces of
        memory-vector, memory-summary (``summary*``) and user-relation are read-only."""
        await service().delete_metadata(_writable(namespace), _text(key, "key"))
        return {"namespace": namespace, "key": key, "deleted": True}

    async def clear_session(session_id: str, types: list[str] | None = None) -> dict[str, Any]:
        """Clear a session through every plugin (history, summary, vectors...), or only the
        named clear types. Returns each plugin's result row."""
        rows = await run_clear(
            host, "session", session_id=_text(session_id, "session_id"), types=types, memory=memory
        )
        return {
            "results": [
                {
                    "source": row.source,
                    "type": row.type,
                    "success": row.success,
                    "message": str(getattr(row.message, "fallback", row.message)),
                }
                for row in rows
            ]
        }

    tools: dict[str, Callable[..., Any]] = {
        "list_sessions": list_sessions,
        "get_history": get_history,
        "get_metadata": get_metadata,
        "list_metadata": list_metadata,
        "search_recall": search_recall,
        "get_facts": get_facts,
        "save_message": save_message,
        "save_metadata": save_metadata,
        "delete_metadata": delete_metadata,
        "clear_session": clear_session,
    }
    for name, function in tools.items():
        if name not in disabled:
            server.add_tool(function, name=name)
    return server


def offered_tools(
    config: McpConfig, recall_present: bool, relation_present: bool = False
) -> list[str]:
    """The tool names a server built with ``config`` offers (for docs and ``--list``)."""
    names = list(READ_TOOLS)
    if recall_present:
        names += RECALL_TOOLS
    if relation_present:
        names += RELATION_TOOLS
    if config.allow_write:
        names += WRITE_TOOLS
    if config.allow_clear:
        names += CLEAR_TOOLS
    return names


__all__ = [
    "CLEAR_TOOLS",
    "PROTECTED_NAMESPACES",
    "READ_TOOLS",
    "RECALL",
    "RECALL_TOOLS",
    "RELATION",
    "RELATION_TOOLS",
    "WRITABLE_ROLES",
    "WRITE_TOOLS",
    "AalisMcpServer",
    "build_server",
    "is_protected_namespace",
    "offered_tools",
]
