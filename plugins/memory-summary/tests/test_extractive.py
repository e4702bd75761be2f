"""The offline extractive summariser: deterministic, labelled, cumulative."""

from aalis_agent import estimate_text_tokens
from aalis_plugin_memory_summary._extractive import (
    HEADER,
    LEGACY_HEADERS,
    LINE_OVERHEAD,
    MAX_BUDGET,
    MIN_BUDGET,
    budget_for,
    split_sentences,
    summarise,
)

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


STAND_IN = (
    "[offline stand-in, not a language model; configure [plugins.llm-openai] for real replies]"
)


def standin_reply(said: str, seen: int) -> tuple[str, str]:
    return ("assistant", f'{STAND_IN} You said: "{said}". I can see {seen} messages.')


FACTS = [
    "My name is Ana Ribeiro.",
    "I live in Porto.",
    "I fly to Berlin on 14 March, flight TP572.",
    "My budget is 1800 euros.",
    "I am allergic to peanuts.",
    "My phone number is +351 912 345 678.",
    "The report is due Friday 21 March.",
    "Haha ok.",
    "Sorry, I got distracted.",
    "Thanks!",
]


def with_standin(lines: list[str]) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    for line in lines:
        items.append(("user", line))
        items.append(standin_reply(line, len(items)))
    return items


def test_it_keeps_the_users_facts_and_no_stand_in_boilerplate() -> None:
    text = summarise(None, with_standin(FACTS))
    for fact in FACTS[:7]:
        assert f"- user: {fact}" in text
    assert STAND_IN not in text  # the notice and the echo are templates
    assert "You said" not in text
    assert "Haha ok." not in text  # small talk
    assert "Sorry, I got distracted." not in text


def test_a_restatement_adds_nothing_once_the_user_said_it() -> None:
    items = [
        ("user", "My flight is TP572 on 14 March."),
        ("assistant", "Your flight is TP572 on 14 March."),
    ]
    text = summarise(None, items)
    assert "- user: My flight is TP572 on 14 March." in text
    assert "- assistant:" not in text


def test_it_fills_its_budget_when_there_is_information() -> None:
    facts = [
        f"Guest number {i} is called Person{i} and arrives at {i % 12 + 1} pm." for i in range(200)
    ]
    items = [("user", line) for line in facts]
    text = summarise(None, items)
    body = text.split("\n", 1)[1]
    used = sum(
        estimate_text_tokens(line.split(": ", 1)[1]) + LINE_OVERHEAD for line in body.splitlines()
    )
    assert used <= MAX_BUDGET + LINE_OVERHEAD
    assert used >= MAX_BUDGET * 0.9  # not a third of it, as the frequency summariser left


def test_the_budget_grows_with_what_the_user_said() -> None:
    assert budget_for(100, 0) == MIN_BUDGET
    assert budget_for(2000, 1000) == 750
    assert budget_for(100_000, 50_000) == MAX_BUDGET
    # a cumulative summary keeps its size and adds room for the new messages
    assert budget_for(400, 200, previous_tokens=500) == 650
    assert budget_for(400, 200, previous_tokens=790) == MAX_BUDGET


def test_facts_survive_many_cumulative_compressions() -> None:
    summary: str | None = None
    facts = [f"My locker number {i} code is {1000 + i * 37}." for i in range(30)]
    for start in range(0, len(facts), 5):  # six compressions of five facts each
        summary = summarise(summary, with_standin(facts[start : start + 5]))
    assert summary is not None
    assert summary.count(HEADER) == 1
    for fact in facts:
        assert fact in summary


def test_sentences_are_not_cut_at_titles() -> None:
    assert split_sentences("My GP is Dr. Lee. She is nice.") == [
        "My GP is Dr. Lee.",
        "She is nice.",
    ]


def test_chinese_facts_are_kept_and_small_talk_is_not() -> None:
    lines = [
        "你好，我叫王小明。",  # noqa: RUF001
        "我对花生过敏。",
        "我的航班是MU5137，3月14日出发。",  # noqa: RUF001
        "预算是5000元。",
        "嗯。",
        "让我想一想。",
    ]
    text = summarise(None, with_standin(lines))
    for fact in lines[:4]:
        assert fact in text
    assert "让我想一想" not in text
    assert STAND_IN not in text


def test_only_boilerplate_still_gives_one_sentence() -> None:
    items = [("assistant", f"{STAND_IN} I can see {i} messages.") for i in range(5)]
    text = summarise(None, items)
    assert text.startswith(HEADER)
    assert len(text.splitlines()) == 2


def test_the_previous_frequency_summary_is_read_back() -> None:
    previous = f"{LEGACY_HEADERS[0]}\n- user: My budget is 1800 euros."
    text = summarise(previous, [("user", "I live in Porto.")])
    assert "- user: My budget is 1800 euros." in text
    assert LEGACY_HEADERS[0] not in text


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
    assert len(text) < MAX_BUDGET * 4 + len(HEADER) + 100
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
