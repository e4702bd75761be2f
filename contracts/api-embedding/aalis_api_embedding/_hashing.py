"""``HashEmbedder``: the reference embedder — character n-grams hashed into a fixed width.

It needs no weights, no network and no native code, so tests, CI and a machine without the
local model still get working (lexical) recall: texts that share spelling land close
together; paraphrases with different words do not. It is deterministic across processes and
platforms (CRC-32, not Python's salted ``hash``), so stored vectors stay valid between runs.
Character n-grams rather than words make it work on scripts without spaces (Chinese,
Japanese) and tolerate inflection and typos.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from collections.abc import Sequence

from aalis_api_embedding._embedder import LEXICAL, EmbedderKind
from aalis_api_embedding._validation import check_text, check_texts

DEFAULT_DIM = 384
DEFAULT_NGRAMS = (2, 3)
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Signed feature hashing of character n-grams and whole words, L2-normalised.

    ``model_id`` encodes the algorithm version, width and n-gram range, so changing any of
    them is a model change that the store keeps apart.
    """

    kind: EmbedderKind = LEXICAL

    def __init__(self, *, dim: int = DEFAULT_DIM, ngrams: tuple[int, int] = DEFAULT_NGRAMS):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim must be an int >= 8, got {dim!r}")
        low, high = ngrams
        if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high <= 8):
            raise ValueError(
                f"ngrams must be (low, high) with 1 <= low <= high <= 8, got {ngrams!r}"
            )
        self._dim = dim
        self._ngrams = (low, high)
        self._model_id = f"hash-ngram-v1-d{dim}-n{low}{high}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(text) for text in check_texts(texts)]

    async def embed_query(self, text: str) -> list[float]:
        return self.vector(check_text(text))

    def vector(self, text: str) -> list[float]:
        """The embedding of one text, synchronously (it is pure CPU and quick)."""
        dim = self._dim
        row = [0.0] * dim
        for feature in self._features(text):
            # surrogatepass: a lone surrogate is still a feature, not an encoding error.
            code = zlib.crc32(feature.encode("utf-8", "surrogatepass"))
            index = code % dim
            row[index] += 1.0 if (code >> 31) & 1 == 0 else -1.0
        norm = math.sqrt(sum(value * value for value in row))
        if norm == 0.0:
            return row
        return [value / norm for value in row]

    def _features(self, text: str) -> list[str]:
        normal = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
        if not normal:
            return []
        padded = f" {normal} "
        features = [f"w:{word}" for word in _WORD.findall(normal)]
        low, high = self._ngrams
        for n in range(low, high + 1):
            features.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
        return features


__all__ = ["DEFAULT_DIM", "DEFAULT_NGRAMS", "HashEmbedder"]
