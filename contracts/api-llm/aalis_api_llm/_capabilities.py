"""The ``llm`` capability descriptor.

A consumer declares ``uses = {"llm": llm}`` and calls ``ctx.caps.llm.use.chat(...)``; which
provider answers is the host's binding (``[consumers.<consumer>] llm = "llm-openai"``).
"""

from __future__ import annotations

from aalis_api_llm._model import ChatModel
from aalis_core import Capability

llm: Capability[ChatModel] = Capability("llm", ChatModel)

__all__ = ["llm"]
