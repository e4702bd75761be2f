from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aalis_api_embedding import LEXICAL, Embedder, embedder_kind, embedding
from aalis_api_embedding_conformance import EmbedderConformance
from aalis_plugin_embedding_hash import EmbeddingHash, HashConfig

from aalis_core._cli import format_plugins_table
from aalis_core.testing import running_host


class TestProvidedEmbedderConformance(EmbedderConformance):
    """The embedder exactly as the plugin provides it through a host."""

    @pytest_asyncio.fixture
    async def embedder(self, tmp_path: Path) -> AsyncIterator[Embedder]:
        async with running_host([EmbeddingHash()], data_dir=tmp_path) as host:
            yield host.capability(embedding).use


async def test_labelled_lexical_in_aalis_plugins(tmp_path: Path) -> None:
    async with running_host([EmbeddingHash()], data_dir=tmp_path) as host:
        (info,) = host.plugins()
        assert info.state == "active"
        assert info.label is not None
        assert info.label.startswith("lexical")
        assert info.to_json()["label"] == info.label
        row = format_plugins_table([info]).splitlines()[1]
        assert "embedding (lexical" in row
        assert embedder_kind(host.capability(embedding).use) == LEXICAL


async def test_config_reaches_the_embedder(tmp_path: Path) -> None:
    config = {"plugins": {"embedding-hash": {"dim": 64, "ngrams": [1, 2]}}}
    async with running_host([EmbeddingHash()], config, data_dir=tmp_path) as host:
        model = host.capability(embedding).use
        assert model.dim == 64
        assert model.model_id == "hash-ngram-v1-d64-n12"
        assert len(await model.embed_query("hello")) == 64


@pytest.mark.parametrize(
    ("fields", "error"),
    [({"dim": 4}, ValueError), ({"dim": "64"}, TypeError), ({"ngrams": [3, 1]}, ValueError)],
)
def test_bad_config_is_refused(fields: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        HashConfig(**fields)  # type: ignore[arg-type]
