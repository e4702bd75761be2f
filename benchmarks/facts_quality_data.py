# ruff: noqa: RUF001 - Chinese text uses full-width punctuation
"""The conversations of ``facts_quality.py``: 14 conversations (8 English, 6 Chinese, two of
them group chats), with facts that change, are corrected and are repeated, and distractors
(questions, what others said, hypotheticals, the assistant's words).

Each conversation: ``turns`` as ``(speaker, text)`` (speaker ``assistant`` is the model),
``expect`` the current value of each attribute per speaker at the end (a list for a
multi-valued attribute: every value must be current), ``stale`` the values that must no
longer be presented. Written by the author of the offline rules: the figures are a floor
that catches regressions, not a claim about text nobody has seen.
"""

from __future__ import annotations

from typing import Any

CONVERSATIONS: list[dict[str, Any]] = [
    {
        "id": "en-move",
        "lang": "en",
        "turns": [
            ("ada", "Hi! My name is Ada."),
            ("ada", "I live in Paris and I work at Acme."),
            ("assistant", "Nice, you live in Paris then."),
            ("ada", "What's a good bakery near me?"),
            ("ada", "Big news: I moved to Berlin last week."),
            ("ada", "Where do I live now?"),
        ],
        "expect": {"ada": {"name": "Ada", "city": "Berlin", "employer": "Acme"}},
        "stale": {"ada": {"city": ["Paris"]}},
    },
    {
        "id": "en-birthday-correction",
        "lang": "en",
        "turns": [
            ("ben", "My birthday is May 4th, remind me to book a table."),
            ("ben", "Actually it's the 14th, not the 4th."),
            ("ben", "I'm allergic to peanuts."),
            ("ben", "My sister is called Mia."),
        ],
        "expect": {
            "ben": {"birthday": "May 14th", "allergy": ["peanuts"], "family": ["Mia (sister)"]}
        },
        "stale": {"ben": {"birthday": ["May 4th"]}},
    },
    {
        "id": "en-job-change",
        "lang": "en",
        "turns": [
            ("cleo", "I work as a nurse at the city hospital."),
            ("cleo", "My friend works at Google, lucky her."),
            ("cleo", "I've just joined Initech as a product manager."),
            ("cleo", "I'm planning to visit Japan in spring."),
        ],
        "expect": {
            "cleo": {
                "employer": "Initech",
                "job": "product manager",
                "plan": ["visit Japan in spring"],
            }
        },
        "stale": {"cleo": {"job": ["nurse"]}},
    },
    {
        "id": "en-tastes",
        "lang": "en",
        "turns": [
            ("dan", "I love coffee."),
            ("dan", "I like jazz and I have a dog named Rex."),
            ("dan", "I don't like coffee anymore, it keeps me awake."),
            ("dan", "I prefer tea over coffee these days."),
            ("dan", "Would you like coffee if you could drink?"),
        ],
        "expect": {"dan": {"likes": ["jazz", "tea"], "dislikes": ["coffee"], "pet": ["dog Rex"]}},
        "stale": {"dan": {"likes": ["coffee"]}},
    },
    {
        "id": "en-diet-contacts",
        "lang": "en",
        "turns": [
            ("eve", "I'm vegetarian, so no meat in the recipes please."),
            ("eve", "My email is eve@example.org."),
            ("eve", "My new email is eve.h@example.net, the old one is gone."),
            ("eve", "If I were vegan I would skip the cheese."),
            ("eve", "I went vegan in January."),
        ],
        "expect": {"eve": {"diet": "vegan", "email": "eve.h@example.net"}},
        "stale": {"eve": {"diet": ["vegetarian"], "email": ["eve@example.org"]}},
    },
    {
        "id": "en-city-back-and-forth",
        "lang": "en",
        "turns": [
            ("finn", "I live in Lisbon."),
            ("finn", "I'm moving to Porto next month."),
            ("finn", "I moved to Porto, finally settled."),
            ("finn", "My wife's name is Jane."),
            ("finn", "I moved back to Lisbon, Porto was too rainy."),
        ],
        "expect": {"finn": {"city": "Lisbon", "partner": "Jane (wife)"}},
        "stale": {"finn": {"city": ["Porto"]}},
    },
    {
        "id": "en-group-trip",
        "lang": "en",
        "group": True,
        "turns": [
            ("gus", "I live in Oslo."),
            ("hana", "I live in Rome, and I'm allergic to shellfish."),
            ("gus", "Hana, do you live near the Colosseum?"),
            ("hana", "I moved to Milan in March actually."),
            ("gus", "I work at Statoil."),
            ("assistant", "Gus lives in Oslo and Hana in Milan."),
        ],
        "expect": {
            "gus": {"city": "Oslo", "employer": "Statoil"},
            "hana": {"city": "Milan", "allergy": ["shellfish"]},
        },
        "stale": {"hana": {"city": ["Rome"]}},
    },
    {
        "id": "en-name-phone",
        "lang": "en",
        "turns": [
            ("ivy", "Call me Ivy."),
            ("ivy", "My phone number is +44 20 7946 0000."),
            ("ivy", "Sorry, my phone number is +44 20 7946 0011."),
            ("ivy", "I have a cat."),
            ("ivy", "I'm a software engineer."),
        ],
        "expect": {
            "ivy": {
                "name": "Ivy",
                "phone": "+44 20 7946 0011",
                "pet": ["cat"],
                "job": "software engineer",
            }
        },
        "stale": {"ivy": {"phone": ["+44 20 7946 0000"]}},
    },
    {
        "id": "zh-move",
        "lang": "zh",
        "turns": [
            ("li", "我叫李雷。"),
            ("li", "我住在上海，在腾讯工作。"),
            ("li", "上海有什么好吃的？"),
            ("li", "我上个月搬到了北京。"),
            ("li", "我住在哪里？"),
        ],
        "expect": {"li": {"name": "李雷", "city": "北京", "employer": "腾讯"}},
        "stale": {"li": {"city": ["上海"]}},
    },
    {
        "id": "zh-birthday-correction",
        "lang": "zh",
        "turns": [
            ("mei", "我的生日是5月4日。"),
            ("mei", "不是5月4日，是5月14日。"),
            ("mei", "我对花生过敏。"),
            ("mei", "我妹妹叫小红。"),
        ],
        "expect": {"mei": {"birthday": "5月14日", "allergy": ["花生"], "family": ["小红（妹妹）"]}},
        "stale": {"mei": {"birthday": ["5月4日"]}},
    },
    {
        "id": "zh-tastes",
        "lang": "zh",
        "turns": [
            ("wang", "我喜欢咖啡。"),
            ("wang", "我有一只猫叫咪咪。"),
            ("wang", "我不喜欢咖啡了，晚上睡不着。"),
            ("wang", "我喜欢爬山。"),
            ("wang", "你喜欢爬山吗？"),
        ],
        "expect": {"wang": {"likes": ["爬山"], "dislikes": ["咖啡"], "pet": ["猫 咪咪"]}},
        "stale": {"wang": {"likes": ["咖啡"]}},
    },
    {
        "id": "zh-job-diet",
        "lang": "zh",
        "turns": [
            ("zhao", "我是一名老师。"),
            ("zhao", "我现在是一名医生。"),
            ("zhao", "我吃素。"),
            ("zhao", "如果我住在杭州就好了。"),
            ("zhao", "我打算明年去日本旅行。"),
        ],
        "expect": {"zhao": {"job": "医生", "diet": "素食", "plan": ["明年去日本旅行"]}},
        "stale": {"zhao": {"job": ["老师"]}},
    },
    {
        "id": "zh-city-correction",
        "lang": "zh",
        "turns": [
            ("chen", "我住在广州。"),
            ("chen", "我的邮箱是chen@example.cn。"),
            ("chen", "不是广州，是深圳。"),
        ],
        "expect": {"chen": {"city": "深圳", "email": "chen@example.cn"}},
        "stale": {"chen": {"city": ["广州"]}},
    },
    {
        "id": "zh-group",
        "lang": "zh",
        "group": True,
        "turns": [
            ("liu", "我住在成都。"),
            ("sun", "我住在重庆，我喜欢火锅。"),
            ("liu", "孙，你住在哪里？"),
            ("sun", "我搬到了西安。"),
            ("liu", "我在华为工作。"),
            ("assistant", "刘住在成都，孙住在西安。"),
        ],
        "expect": {
            "liu": {"city": "成都", "employer": "华为"},
            "sun": {"city": "西安", "likes": ["火锅"]},
        },
        "stale": {"sun": {"city": ["重庆"]}},
    },
]

__all__ = ["CONVERSATIONS"]
