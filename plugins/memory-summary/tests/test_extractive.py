"""The offline extractive summariser: deterministic, labelled, cumulative."""

from aalis_plugin_memory_summary.extractive import HEADER, split_sentences, summarise

CONVERSATION = [
    (
        "user",
        "I want to plan a trip to Lisbon in May. What should the budget for the Lisbon trip be?",
    ),
    ("assistant", "A week in Lisbon costs about 1200 euros. Hotels in Lisbon are cheaper in May."),
    ("user", "Nice weather today."),
    ("assistant", "The Lisbon trip budget of 1200 euros covers hotels, food and trams."),
    ("user", "ok thanks"),
]


def test_it_is_deterministic_and_labelled() -> None:
    first = summarise(None, CONVERSATION)
    assert first == summarise(None, CONVERSATION)
    lines = first.splitlines()
    assert lines[0] == HEADER
    assert all(line.startswith(("- user: ", "- assistant: ")) for line in lines[1:])


FILLER = [
    ("user", "Rain is expected tomorrow."),
    ("assistant", "My cat sleeps on the sofa."),
    ("user", "The coffee here is strong."),
    ("assistant", "Traffic downtown was slow this morning."),
    ("user", "Did you watch the football match?"),
    ("assistant", "I repainted the kitchen green."),
    ("user", "Printers never work when needed."),
    ("assistant", "Some birds sang outside early."),
]


def test_it_prefers_sentences_about_the_frequent_topic() -> None:
    text = summarise(None, CONVERSATION + FILLER)
    assert "Lisbon" in text
    assert "1200 euros" in text
    assert "Nice weather today." not in text
    assert "ok thanks" not in text


def test_sentences_stay_in_their_original_order() -> None:
    lines = summarise(None, CONVERSATION).splitlines()[1:]
    order = [
        next(i for i, (_, t) in enumerate(CONVERSATION) if line.split(": ", 1)[1] in t)
        for line in lines
    ]
    assert order == sorted(order)


def test_it_is_cumulative() -> None:
    first = summarise(None, CONVERSATION)
    second = summarise(
        first, [("user", "Book the Lisbon hotel near the river."), ("assistant", "Done.")]
    )
    assert second.startswith(HEADER)
    assert second.count(HEADER) == 1
    assert "1200 euros" in second  # carried over from the previous summary
    assert "Lisbon hotel" in second


def test_budget_bounds_the_length() -> None:
    many = [
        ("user", f"Sentence number {i} talks about Lisbon and budgets and hotels.")
        for i in range(400)
    ]
    text = summarise(None, many)
    assert len(text) < 600 * 4 + len(HEADER) + 100
    assert text.count("\n") >= 3


def test_cjk_text_is_scored_by_character_pairs() -> None:
    text = summarise(
        None,
        [
            ("user", "我想去北京旅行。北京的天气怎么样？今天吃了饭。"),  # noqa: RUF001
            ("assistant", "北京五月天气很好。"),
        ],
    )
    assert "北京" in text
    assert split_sentences("一。二！三？") == ["一。", "二！", "三？"]  # noqa: RUF001


def test_empty_input_gives_empty_text() -> None:
    assert summarise(None, []) == ""
