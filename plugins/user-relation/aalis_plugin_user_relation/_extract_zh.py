# ruff: noqa: RUF001, RUF002 - the rules read full-width punctuation
"""The offline extractor's Chinese rules: first-person statements (我…), one sentence at
a time. Questions (…吗, 哪里, 什么, ？) and conditionals (如果, 要是, 假如) are skipped."""

from __future__ import annotations

import re

from aalis_plugin_user_relation._drafts import Draft, LazyPattern, clean, lazy

#: A short value: up to the next punctuation or particle.
_V = r"(?P<v>[^，。！？；,.!?;\s了的呢吧啊]{1,16})"
_LONG = r"(?P<v>[^，。！？；,.!?;]{1,24})"
_NOW = r"(?:现在|目前|已经|刚刚|刚|最近|去年|今年|上个月|也|还)?"
_JOBS = (
    r"老师|医生|护士|工程师|程序员|设计师|律师|学生|厨师|会计|记者|作家|建筑师|研究员|"
    r"经理|教授|翻译|司机|警察|画家|演员|歌手|销售|产品经理|软件工程师|数据分析师"
)
_PARTNERS = r"妻子|老婆|太太|丈夫|老公|先生|男朋友|女朋友|未婚妻|未婚夫"
_RELATIVES = r"妹妹|姐姐|哥哥|弟弟|儿子|女儿|妈妈|爸爸|母亲|父亲|奶奶|爷爷"
_PETS = r"小狗|小猫|狗|猫|兔子|鹦鹉|仓鼠|金鱼|乌龟"

RULES: list[tuple[str, LazyPattern]] = [
    ("name", lazy(r"我(?:的名字)?(?:叫|是叫)" + _V)),
    ("name", lazy(r"我的名字是" + _V)),
    ("city", lazy(r"我" + _NOW + r"(?:住在|生活在|定居在|定居于|住)" + _V)),
    ("city", lazy(r"我" + _NOW + r"(?:搬家|搬)(?:到|去)了?" + _V)),
    (
        "employer",
        lazy(r"我" + _NOW + r"在(?P<v>[^，。！？；,.!?;\s]{1,16}?)(?:工作|上班|任职)"),
    ),
    ("employer", lazy(r"我" + _NOW + r"(?:加入了|入职了?)" + _V)),
    (
        "job",
        lazy(r"我" + _NOW + r"(?:是|是一名|是一个|是个|当)(?:一名)?(?P<v>" + _JOBS + r")"),
    ),
    ("job", lazy(r"我的(?:工作|职业)是" + _V)),
    ("diet", lazy(r"我" + _NOW + r"(?P<v>吃素|是素食者|是素食主义者|是纯素食者|吃纯素)")),
    ("allergy", lazy(r"我对" + _V + r"过敏")),
    (
        "health",
        lazy(r"我" + _NOW + r"(?P<v>不能吃|不吃|不可以吃)(?P<w>[^，。！？；,.!?;\s了的]{1,12})"),
    ),
    ("health", lazy(r"我" + _NOW + r"有(?P<v>糖尿病|哮喘|高血压|乳糖不耐受)")),
    ("partner", lazy(r"我(?:的)?(?P<rel>" + _PARTNERS + r")(?:叫|名叫|的名字是)" + _V)),
    ("family", lazy(r"我(?:的)?(?P<rel>" + _RELATIVES + r")(?:叫|名叫|的名字是)" + _V)),
    (
        "pet",
        lazy(
            r"我(?:有|养了?)(?:一|两)(?:只|条|个)(?P<rel>"
            + _PETS
            + r")(?:[，,]?(?:叫|名叫|名字叫)"
            + _V
            + ")?"
        ),
    ),
    ("pet", lazy(r"我的(?P<rel>" + _PETS + r")叫" + _V)),
    (
        "email",
        lazy(r"我的(?:新)?(?:邮箱|电子邮件|电邮)(?:地址)?是\s*(?P<v>[\w.+-]+@[\w-]+\.[\w.-]*\w)"),
    ),
    ("phone", lazy(r"我的(?:新)?(?:电话|手机)(?:号码|号)?是\s*(?P<v>\+?\d[\d -]{4,}\d)")),
    ("birthday", lazy(r"我的生日是" + _V)),
    ("birthday", lazy(r"我(?:是)?(?P<v>[^，。！？；,.!?;\s]{2,12}?)(?:出生|生)的")),
    ("dislikes", lazy(r"我(?:不喜欢|讨厌|不爱|不再喜欢|受不了)" + _V)),
    ("likes", lazy(r"我(?:很|非常|最|也|特别|现在)?(?:喜欢|爱|热爱)" + _V)),
    ("plan", lazy(r"我(?:打算|计划|准备|想要|要去)" + _LONG)),
]

_CORRECTIONS = [
    lazy(
        r"不是(?P<old>[^，。！？；,.!?;\s而]{1,12})[，,]?\s*(?:而)?是(?P<new>[^，。！？；,.!?;\s]{1,12})"
    ),
    lazy(
        r"(?:其实|应该)?是(?P<new>[^，。！？；,.!?;\s]{1,12})[，,]\s*不是(?P<old>[^，。！？；,.!?;\s]{1,12})"
    ),
]

_SKIP = lazy(r"吗[？?。]?$|[哪啥]|什么|多少|如果|要是|假如|假设|是否|[？?]$")
_NOT_LIKED = {"你", "它", "这个", "那个", "他", "她"}


def extract_zh(sentence: str) -> list[Draft]:
    """The self-statements in one Chinese sentence."""
    text = sentence.strip()
    if not text or _SKIP.search(text):
        return []
    for pattern in _CORRECTIONS:
        found = pattern.search(text)
        if found:
            new, old = clean(found.group("new")), clean(found.group("old"))
            if new and old and new != old:
                return [Draft("*", new, corrects=old)]
    drafts: list[Draft] = []
    for clause in _clauses(text):
        drafts += _read(clause)
    return drafts


def _clauses(text: str) -> list[str]:
    """The clauses of a sentence; "我住在上海，在腾讯工作" keeps its subject in the second,
    and "我有一只猫，叫咪咪" stays one clause (the name is the cat's)."""
    if "不是" in text:
        return [text]
    parts: list[str] = []
    for part in (p.strip() for p in re.split(r"[，,]", text)):
        if not part:
            continue
        if parts and part.startswith(("叫", "名叫", "名字叫")):
            parts[-1] += "，" + part
        else:
            parts.append(part)
    if len(parts) < 2 or not parts[0].startswith("我"):
        return [text] if parts else []
    return [parts[0], *(p if p.startswith("我") else "我" + p for p in parts[1:])]


def _read(text: str) -> list[Draft]:
    drafts: list[Draft] = []
    taken: list[tuple[int, int]] = []
    for attribute, pattern in RULES:
        for found in pattern.finditer(text):
            span = found.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            groups = found.groupdict()
            value = clean(groups.get("v") or "")
            rel = groups.get("rel") or ""
            if attribute == "pet":
                value = f"{rel} {value}".strip()
            elif attribute in ("partner", "family"):
                value = f"{value}（{rel}）" if value else ""
            elif attribute == "health" and groups.get("w"):
                value = value + clean(groups["w"] or "")
            elif attribute == "diet":
                value = "素食" if "纯" not in value else "纯素"
            if not value or value in _NOT_LIKED:
                continue
            drafts.append(Draft(attribute, value))
            taken.append(span)
    return drafts


__all__ = ["RULES", "extract_zh"]
