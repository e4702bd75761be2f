# ruff: noqa: RUF001 - Chinese text uses full-width punctuation
"""The offline extractor: what it reads, in English and Chinese, and what it leaves alone."""

from __future__ import annotations

import pytest
from aalis_plugin_user_relation._drafts import Draft
from aalis_plugin_user_relation._extractor import extract

READS = [
    ("My name is Ada Lovelace.", "name", "Ada Lovelace"),
    ("I live in Paris now.", "city", "Paris"),
    ("I moved to Berlin last month!", "city", "Berlin"),
    ("I live in Rio de Janeiro.", "city", "Rio de Janeiro"),
    ("I work at Acme Corp.", "employer", "Acme Corp"),
    ("I work as a nurse.", "job", "nurse"),
    ("I'm a software engineer.", "job", "software engineer"),
    ("I'm vegetarian.", "diet", "vegetarian"),
    ("I'm allergic to peanuts.", "allergy", "peanuts"),
    ("My sister is called Mia.", "family", "Mia (sister)"),
    ("My wife's name is Jane.", "partner", "Jane (wife)"),
    ("I have a dog named Rex.", "pet", "dog Rex"),
    ("My email is ada@example.com.", "email", "ada@example.com"),
    ("My birthday is May 4th.", "birthday", "May 4th"),
    ("I love jazz.", "likes", "jazz"),
    ("I don't like coffee anymore.", "dislikes", "coffee"),
    ("I'm planning to visit Japan in spring.", "plan", "visit Japan in spring"),
    ("我叫李雷。", "name", "李雷"),
    ("我住在上海。", "city", "上海"),
    ("我搬到了北京。", "city", "北京"),
    ("我在腾讯工作。", "employer", "腾讯"),
    ("我是一名医生。", "job", "医生"),
    ("我吃素。", "diet", "素食"),
    ("我对花生过敏。", "allergy", "花生"),
    ("我妹妹叫小红。", "family", "小红（妹妹）"),
    ("我有一只猫叫咪咪。", "pet", "猫 咪咪"),
    ("我的生日是5月4日。", "birthday", "5月4日"),
    ("我喜欢爬山。", "likes", "爬山"),
    ("我不喜欢咖啡。", "dislikes", "咖啡"),
    ("我打算明年去日本旅行。", "plan", "明年去日本旅行"),
]


@pytest.mark.parametrize(("text", "attribute", "value"), READS)
def test_it_reads_a_self_statement(text: str, attribute: str, value: str) -> None:
    assert Draft(attribute, value) in extract(text)


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",
        "If I lived in Rome I would be happy.",
        "My friend lives in Oslo.",
        "You live in Paris, right?",
        "Maybe I live in Lisbon one day.",
        "我住在哪里？",
        "如果我住在上海就好了。",
        "你喜欢咖啡吗？",
        "I love it.",
    ],
)
def test_it_leaves_questions_hypotheticals_and_others_alone(text: str) -> None:
    assert extract(text) == []


def test_two_statements_in_one_message() -> None:
    drafts = extract("I work at Acme Corp and I love jazz. 我住在上海。")
    assert Draft("employer", "Acme Corp") in drafts
    assert Draft("likes", "jazz") in drafts
    assert Draft("city", "上海") in drafts


def test_corrections_name_the_words_they_correct() -> None:
    assert extract("Actually it's the 14th, not the 4th.") == [Draft("*", "14th", "the 4th")]
    assert extract("不是5月4日，是5月14日。") == [Draft("*", "5月14日", "5月4日")]


def test_a_chinese_subject_carries_over_a_comma_but_a_pets_name_stays_the_pets() -> None:
    assert extract("我住在上海，在腾讯工作。") == [Draft("city", "上海"), Draft("employer", "腾讯")]
    assert extract("我有一只猫，叫咪咪。") == [Draft("pet", "猫 咪咪")]


def test_joining_a_company_as_something_is_an_employer_and_a_job() -> None:
    assert extract("I've just joined Initech as a product manager.") == [
        Draft("employer", "Initech"),
        Draft("job", "product manager"),
    ]
    assert extract("I work as a nurse at the city hospital.") == [Draft("job", "nurse")]
