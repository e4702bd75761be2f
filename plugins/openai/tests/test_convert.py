import httpx
from aalis_plugin_openai._convert import to_chat_messages
from aalis_plugin_openai._http import parse_retry_after
from aalis_schema_message import Message


def test_images_become_content_parts() -> None:
    [out] = to_chat_messages(
        [
            Message(
                role="user",
                content="what is this?",
                images=("https://x.invalid/a.png", {"url": "data:image/png;base64,AA"}),
            )
        ]
    )
    assert out == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "https://x.invalid/a.png"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
        ],
    }


def test_metadata_and_control_kinds_never_reach_the_model() -> None:
    out = to_chat_messages(
        [
            Message(role="user", content="hi", metadata={"platform": "tg", "secret": 1}),
            Message(role="assistant", kind="event-marker", content="turn"),
        ]
    )
    assert out == [{"role": "user", "content": "hi"}]


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert (
        parse_retry_after(
            httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), now=1445412470.0
        )
        == 10.0
    )
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None
