"""``LangGraphThreads``: the plugin that makes ``aalis clear`` clear a graph's threads too.

A thread's conversation is its session's history (``_mirror.py``) *and* its checkpoints;
clearing only the first would leave the graph resuming from the checkpoints and the next
checkpoint re-adding nothing of what came before, so the two go together. The saver is not
a plugin (an app constructs it), and ``aalis clear`` runs in another process than the app,
so this small plugin, registered by the distribution's entry point, joins the
``memory_clear`` chain of every host where aalis-langgraph is installed. It imports no
LangGraph: it only deletes metadata namespaces (docs/integrations/langgraph.md, "Clearing").

It also finishes the savers' history copies (``_copies.py``) of its loop before a clear or
a forget deletes anything (a later copy would bring the messages back) and when the host
stops. It uses recall, compression and facts so that it starts after the plugins that
listen to the copies' saves, and therefore stops before them: its last copies still reach
them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from aalis_api_memory import CONTEXT, ClearRequest, Delete, ForgetRequest, Put, compression, memory
from aalis_api_relation import relation
from aalis_api_vectorstore import recall

from aalis_core import Plugin, hookimpl
from aalis_langgraph._copies import flush_everywhere
from aalis_langgraph._layout import THREADS, thread_namespace

if TYPE_CHECKING:
    from aalis_core import Handle, PluginContext

SOURCE = "langgraph"


class LangGraphThreads(Plugin):
    """Deletes a cleared session's LangGraph checkpoints (all threads on a clear of all).

    Checkpoints are the conversation, so they belong to the ``context`` type: a clear that
    takes the history takes them, a clear of other types (``-t summary``) leaves them. A row
    is reported only when there was a thread to clear.
    """

    name = "langgraph"
    # Only ``memory`` is called; the others order the start (see the module).
    uses: ClassVar[dict[str, Any]] = {
        "memory": memory,
        "recall": recall,
        "compression": compression,
        "relation": relation,
    }

    def __init__(self) -> None:
        self._memory: Handle[Any] | None = None

    async def start(self, ctx: PluginContext) -> None:
        self._memory = ctx.caps.memory

    async def stop(self) -> None:
        await flush_everywhere()
        self._memory = None

    @hookimpl
    async def memory_forget(
        self, request: ForgetRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        await flush_everywhere(here=True)
        await call_next()

    @hookimpl
    async def memory_clear(
        self, request: ClearRequest, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        await flush_everywhere(here=True)
        await call_next()
        handle = self._memory
        if not request.wants(CONTEXT) or handle is None or not handle.present:
            return
        store = handle.use
        try:
            if request.scope == "all":
                threads = [e.key for e in await store.list_metadata(THREADS)]
            else:
                sid = str(request.session_id)
                listed = await store.get_metadata(THREADS, sid) is not None
                keys = await store.list_metadata(thread_namespace(sid))
                threads = [sid] if listed or keys else []
            if not threads:
                return
            ops: list[Put | Delete] = []
            for thread in threads:
                space = thread_namespace(thread)
                ops.extend(Delete(space, e.key) for e in await store.list_metadata(space))
                ops.append(Delete(THREADS, thread))
            await store.commit_metadata(ops)
        except Exception as exc:
            request.report(
                SOURCE, False, f"LangGraph checkpoints not cleared: {_error_text(exc)}", CONTEXT
            )
            return
        what = f"thread {threads[0]!r}" if request.scope == "session" else f"{len(threads)} threads"
        request.report(SOURCE, True, f"LangGraph checkpoints cleared ({what})", CONTEXT)


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["LangGraphThreads"]
