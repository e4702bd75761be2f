"""The model extractor: the ``llm`` capability reads a batch of messages in ONE call.

Opt-in (``extractor = "llm"``): each batch the deriver reads is one model call, never one per
message, within a budget (``llm_calls_per_hour``, ``llm_max_chars``, ``llm_timeout_s``). A
call that fails, times out, is over budget or answers something that is not the JSON asked
for leaves the offline extractor's result for that batch: a model never makes the layer
know less than it knows offline. Facts it produced are labelled ``extractor: "llm"``.
"""

from __future__ import annotations

import asyncio
import collections
import json
import re
import time
from collections.abc import Sequence
from typing import Any

from aalis_schema_message import Message

from aalis_plugin_user_relation._drafts import Draft

EXTRACTOR = "llm"
CONFIDENCE = 0.8

PROMPT = """You read numbered messages people wrote and list what each writer states about \
THEMSELVES. Skip questions, hypotheticals, and what they say about other people. Answer with \
JSON only, no prose:
{"facts": [{"message": <number>, "attribute": "<attribute>", "value": "<short value>", \
"corrects": null}]}
Attributes: name, city, employer, job, diet, birthday, email, phone, partner, family, pet, \
allergy, health, likes, dislikes, plan, or a short lower-case name of your own. For a \
correction ("actually the 14th, not the 4th") use attribute "*", the new words as value and \
the corrected words as "corrects". Values in the language of the message."""


def parse(content: str, count: int) -> list[list[Draft]] | None:
    """The drafts per message in a model's answer; None when it is not the JSON asked for."""
    text = content.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        return None
    drafts: list[list[Draft]] = [[] for _ in range(count)]
    for item in data["facts"]:
        if not isinstance(item, dict):
            return None
        index, attribute, value = item.get("message"), item.get("attribute"), item.get("value")
        corrects = item.get("corrects")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            return None
        if not isinstance(attribute, str) or not isinstance(value, str):
            return None
        if corrects is not None and not isinstance(corrects, str):
            return None
        # The model's value as it wrote it ("Mia (sister)"): only whitespace is normalised.
        attribute, value = " ".join(attribute.lower().split())[:40], " ".join(value.split())
        if attribute and value:
            old = " ".join(corrects.split()) if corrects else None
            drafts[index].append(Draft(attribute, value[:200], old or None))
    return drafts


class LlmExtractor:
    """One call per batch, within the budget; ``None`` means "use the offline result"."""

    def __init__(
        self, model: Any, *, timeout_s: float, calls_per_hour: int, max_chars: int, logger: Any
    ) -> None:
        self._model = model  # a Handle of the llm capability
        self._timeout_s = timeout_s
        self._calls_per_hour = calls_per_hour
        self._max_chars = max_chars
        self._logger = logger
        self._calls: collections.deque[float] = collections.deque()
        self.calls = 0
        self.failures = 0

    def _within_budget(self) -> bool:
        now = time.monotonic()
        while self._calls and now - self._calls[0] > 3600:
            self._calls.popleft()
        return len(self._calls) < self._calls_per_hour

    async def extract(self, messages: Sequence[Message]) -> list[list[Draft]] | None:
        if not messages or not self._model.present:
            return None
        if not self._within_budget():
            self._logger.info("llm extraction over budget; offline result used")
            return None
        lines: list[str] = []
        used = 0
        for index, message in enumerate(messages):
            line = f"[{index}] " + " ".join(str(message.content or "").split())[:1000]
            if used + len(line) > self._max_chars and lines:
                return None  # the batch does not fit the budget: offline for all of it
            lines.append(line)
            used += len(line)
        self._calls.append(time.monotonic())
        self.calls += 1
        try:
            async with asyncio.timeout(self._timeout_s):
                result = await self._model.use.chat(
                    [
                        Message(role="system", content=PROMPT),
                        Message(role="user", content="\n".join(lines)),
                    ],
                    temperature=0,
                )
            drafts = parse(str(result.content), len(messages))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.failures += 1
            self._logger.warning(
                "llm extraction failed; offline result used", error=f"{type(exc).__name__}: {exc}"
            )
            return None
        if drafts is None:
            self.failures += 1
            self._logger.warning("llm extraction answered no valid JSON; offline result used")
        return drafts


__all__ = ["CONFIDENCE", "EXTRACTOR", "PROMPT", "LlmExtractor", "parse"]
