"""Input and output checks shared by every embedder and by the code that calls them.

Providers call ``check_texts`` before any work so bad input fails the same way everywhere,
and ``check_vectors`` on what a model or server returned, so a short batch or a wrong width
is an ``EmbeddingResponseError`` at the embedder and never a corrupt row in a store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aalis_api_embedding._errors import EmbeddingResponseError


def check_text(text: object) -> str:
    """``text`` itself when it is a ``str``; ``TypeError`` otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"a text to embed must be a str, got {type(text).__name__}")
    return text


def check_texts(texts: object) -> list[str]:
    """``texts`` as a list when it is a sequence of ``str`` (and not a ``str`` itself)."""
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise TypeError(
            f"texts to embed must be a sequence of str (a list), got {type(texts).__name__}"
        )
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
    return list(texts)


def check_vectors(
    vectors: object, *, count: int, dim: int, model_id: str | None = None
) -> list[list[float]]:
    """``vectors`` as lists of floats when there are ``count`` of them, each ``dim`` finite
    numbers; ``EmbeddingResponseError`` naming what is wrong otherwise."""
    if not isinstance(vectors, Sequence) or isinstance(vectors, str | bytes):
        raise EmbeddingResponseError(
            f"expected a list of {count} vectors, got {type(vectors).__name__}", model_id=model_id
        )
    if len(vectors) != count:
        raise EmbeddingResponseError(
            f"expected {count} vectors, got {len(vectors)}", model_id=model_id
        )
    checked: list[list[float]] = []
    for index, vector in enumerate(vectors):
        if isinstance(vector, str | bytes) or not hasattr(vector, "__len__"):
            raise EmbeddingResponseError(
                f"vector {index} is a {type(vector).__name__}, not a list of floats",
                model_id=model_id,
            )
        if len(vector) != dim:
            raise EmbeddingResponseError(
                f"vector {index} has {len(vector)} dimensions, expected {dim}", model_id=model_id
            )
        try:
            row = [float(value) for value in vector]
        except (TypeError, ValueError) as exc:
            raise EmbeddingResponseError(
                f"vector {index} holds a value that is not a number ({exc})", model_id=model_id
            ) from None
        if not all(math.isfinite(value) for value in row):
            raise EmbeddingResponseError(
                f"vector {index} holds a NaN or infinite value", model_id=model_id
            )
        checked.append(row)
    return checked


__all__ = ["check_text", "check_texts", "check_vectors"]
