"""The ``embedding-hash`` plugin: the lexical fallback ``embedding`` provider.

It provides the contract's reference ``HashEmbedder`` (character n-grams hashed into a fixed
width). Priority 0 puts it below the local semantic model (embedding-local, 10), so it
answers only when that model is not installed or is disabled — recall then still works, on
shared spelling rather than meaning, and says so: the plugin is labelled *lexical*.
"""

from __future__ import annotations

from typing import Any

import attrs
from aalis_api_embedding import DEFAULT_DIM, DEFAULT_NGRAMS, HashEmbedder, embedding

from aalis_core import Plugin, PluginContext

PRIORITY = 0


def _dim(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer, got {type(value).__name__}")
    if not 8 <= value <= 8192:
        raise ValueError(f"{attribute.name} must be between 8 and 8192, got {value}")


def _ngrams(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _check_ngrams(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
        and 1 <= value[0] <= value[1] <= 8
    ):
        raise ValueError(f"{attribute.name} must be [low, high] with 1 <= low <= high <= 8")


@attrs.frozen(kw_only=True)
class HashConfig:
    """``[plugins.embedding-hash]``: the vector width and the character n-gram range.

    Changing either changes the ``model_id``, so stored vectors are kept apart until
    ``aalis vector reindex``.
    """

    dim: int = attrs.field(default=DEFAULT_DIM, validator=_dim)
    ngrams: tuple[int, int] = attrs.field(
        default=DEFAULT_NGRAMS, converter=_ngrams, validator=_check_ngrams
    )


class EmbeddingHash(Plugin):
    """Provides a ``HashEmbedder`` at priority 0."""

    name = "embedding-hash"
    label = "lexical: character n-gram hashing, matches spelling not meaning"
    provides = (embedding,)
    Config = HashConfig

    def __init__(self) -> None:
        self.embedder: HashEmbedder | None = None

    async def start(self, ctx: PluginContext) -> None:
        config: HashConfig = ctx.config  # the host validated [plugins.embedding-hash]
        self.embedder = HashEmbedder(dim=config.dim, ngrams=config.ngrams)
        ctx.provide(embedding, self.embedder, priority=PRIORITY)


__all__ = ["PRIORITY", "EmbeddingHash", "HashConfig"]
