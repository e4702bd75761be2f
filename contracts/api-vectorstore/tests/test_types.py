import pytest
from aalis_api_vectorstore import (
    InMemoryVectorStore,
    Recall,
    RecallHit,
    ScopeFilter,
    VectorRecord,
    VectorStore,
    recall,
    vectorstore,
)
from aalis_schema_message import Message


def test_a_session_filter_names_its_session() -> None:
    where = ScopeFilter.session("m", "s1", platform="qq")
    assert where.session_ids == frozenset({"s1"})
    assert where.platform == "qq"


def test_session_ids_are_required() -> None:
    with pytest.raises(TypeError):
        ScopeFilter(model_id="m")  # type: ignore[call-arg]


def test_a_single_str_is_not_a_set_of_sessions() -> None:
    with pytest.raises(TypeError, match="characters"):
        ScopeFilter(model_id="m", session_ids="abc")
    with pytest.raises(TypeError):
        ScopeFilter(model_id="m", session_ids=None, roles="user")
    with pytest.raises(TypeError):
        ScopeFilter(model_id="m", session_ids=[1, 2])


def test_model_id_must_be_named() -> None:
    with pytest.raises(ValueError, match="model_id"):
        ScopeFilter(model_id="", session_ids=None)


def test_lists_become_frozensets() -> None:
    where = ScopeFilter(model_id="m", session_ids=["a", "a", "b"], exclude_session_ids=["b"])
    assert where.session_ids == frozenset({"a", "b"})
    assert where.exclude_session_ids == frozenset({"b"})
    assert not where.is_empty
    assert ScopeFilter(model_id="m", session_ids=["b"], exclude_session_ids=["b"]).is_empty
    assert ScopeFilter(model_id="m", session_ids=None, roles=[]).is_empty


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("session_id", 3, TypeError),
        ("timestamp", True, TypeError),
        ("timestamp", 1.5, TypeError),
        ("role", "", ValueError),
        ("model_id", "", ValueError),
        ("text", None, TypeError),
        ("vector", "abc", TypeError),
        ("vector", [], ValueError),
        ("platform", 3, TypeError),
        ("message_id", "", ValueError),
        ("message_id", None, TypeError),
    ],
)
def test_records_check_their_fields(field: str, value: object, error: type[Exception]) -> None:
    fields: dict[str, object] = {
        "message_id": "m1",
        "session_id": "s",
        "timestamp": 1,
        "role": "user",
        "model_id": "m",
        "text": "t",
        "vector": [1.0],
    }
    fields[field] = value
    with pytest.raises(error):
        VectorRecord(**fields)  # type: ignore[arg-type]


def test_the_reference_store_is_a_vector_store() -> None:
    assert isinstance(InMemoryVectorStore(), VectorStore)
    assert vectorstore.name == "vectorstore"
    assert recall.name == "recall"
    assert recall.protocol is Recall


def test_recall_hits_hold_messages() -> None:
    message = Message(role="user", content="hi", timestamp=1)
    hit = RecallHit(session_id="s", message=message, score=0.5)
    assert hit.neighbours == ()
    assert hit.source is None  # a provider that does not say why a hit came
    assert RecallHit(session_id="s", message=message, score=0.5, source="both").source == "both"
