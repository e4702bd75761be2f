"""Where a LangGraph thread lives in the memory store: names shared by the saver and the
clear plugin, in a module that imports no LangGraph (the plugin loads in every host).

The layout is in docs/integrations/langgraph.md ("Where the checkpoints are").
"""

from __future__ import annotations

import json
from typing import Any

#: The namespace that lists the threads a saver wrote.
THREADS = "langgraph-threads"
#: The prefix of a thread's namespace.
PREFIX = "langgraph:"


def thread_namespace(thread_id: str) -> str:
    """The metadata namespace that holds ``thread_id``'s checkpoints."""
    return PREFIX + thread_id


def entry_key(*parts: Any) -> str:
    """A thread entry's key: its parts as a compact JSON list (ordered, unambiguous)."""
    return json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))


#: The key of a thread's mirror record: which graph messages its session already holds.
MIRROR_KEY = entry_key("m")

__all__ = ["PREFIX", "THREADS", "thread_namespace"]
