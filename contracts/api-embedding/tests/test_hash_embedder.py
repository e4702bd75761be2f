from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from aalis_api_embedding import LEXICAL, HashEmbedder, embedder_kind
from aalis_api_embedding_conformance import EmbedderConformance, cosine


class TestHashEmbedderConformance(EmbedderConformance):
    @pytest_asyncio.fixture
    async def embedder(self) -> AsyncIterator[HashEmbedder]:
        yield HashEmbedder()


def test_it_is_labelled_lexical() -> None:
    assert embedder_kind(HashEmbedder()) == LEXICAL


def test_model_id_changes_with_every_parameter() -> None:
    ids = {
        HashEmbedder().model_id,
        HashEmbedder(dim=256).model_id,
        HashEmbedder(ngrams=(1, 3)).model_id,
    }
    assert len(ids) == 3


def test_vectors_are_unit_length_and_stable_across_instances() -> None:
    a, b = HashEmbedder(), HashEmbedder()
    va, vb = a.vector("green tea with honey"), b.vector("green tea with honey")
    assert va == vb
    assert abs(sum(x * x for x in va) - 1.0) < 1e-9


def test_shared_spelling_scores_higher_than_none_in_both_scripts() -> None:
    e = HashEmbedder()
    assert cosine(e.vector("I like green tea"), e.vector("green tea is nice")) > cosine(
        e.vector("I like green tea"), e.vector("the train leaves at nine")
    )
    assert cosine(e.vector("我喜欢喝绿茶"), e.vector("绿茶很好喝")) > cosine(
        e.vector("我喜欢喝绿茶"), e.vector("火车九点出发")
    )


def test_empty_text_is_the_zero_vector() -> None:
    assert HashEmbedder(dim=16).vector("  ") == [0.0] * 16


@pytest.mark.parametrize("bad", [0, 7, -1, True, 8.0])
def test_bad_dim_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="dim"):
        HashEmbedder(dim=bad)  # type: ignore[arg-type]


def test_bad_ngram_range_is_rejected() -> None:
    with pytest.raises(ValueError, match="ngrams"):
        HashEmbedder(ngrams=(3, 2))
