import math

import pytest
from aalis_api_embedding import EmbeddingResponseError, check_texts, check_vectors


def test_check_texts_accepts_sequences_of_str() -> None:
    assert check_texts(("a", "b")) == ["a", "b"]


@pytest.mark.parametrize("bad", ["abc", b"abc", None, 3, {"a"}])
def test_check_texts_rejects_non_sequences(bad: object) -> None:
    with pytest.raises(TypeError):
        check_texts(bad)


def test_check_vectors_accepts_ints_as_floats() -> None:
    assert check_vectors([[1, 2]], count=1, dim=2) == [[1.0, 2.0]]


@pytest.mark.parametrize(
    ("vectors", "needle"),
    [
        ([[1.0, 2.0]], "expected 2 vectors"),
        ([[1.0], [1.0, 2.0]], "dimensions"),
        ([[1.0, math.nan], [1.0, 2.0]], "NaN"),
        ([[1.0, "x"], [1.0, 2.0]], "not a number"),
        (["ab", [1.0, 2.0]], "not a list"),
        ("nope", "list of 2"),
    ],
)
def test_check_vectors_names_what_is_wrong(vectors: object, needle: str) -> None:
    with pytest.raises(EmbeddingResponseError, match=needle):
        check_vectors(vectors, count=2, dim=2, model_id="m")
