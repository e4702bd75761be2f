"""The built-in offline summariser: extractive, deterministic, no model, made to keep facts.

A summary replaces messages the model will never see again, so what must survive is what the
user said about themselves and their task: names, places, dates, amounts, phone numbers,
flights, allergies, budgets, deadlines. Classic extractive methods (word frequency, LexRank,
TextRank) reward what is *repeated*; in a chat the most repeated text is boilerplate (an
assistant's stock phrases, the offline stand-in's notice and echo), while a phone number is
said once. This method therefore scores *information*, not centrality (why not a library:
docs/compression.md):

1. **Sentences**: each message is split at sentence ends (``. ! ?`` followed by space, the CJK
   marks U+3002, U+FF01, U+FF1F) and at line breaks; a sentence is cut to 300 characters.
2. **Units** of information: Latin-script words of 2+ letters (lower-cased, minus English stop
   words), numbers, and overlapping character pairs of CJK text. A unit found in many
   sentences weighs less (``1 / sqrt(sentences holding it)``).
3. **Boilerplate**: a sentence not said by the user whose *shape* (lower-cased, digits and quoted text blanked out)
   occurs in 2 or more messages is a template ("You said: ...", "I can see 12 messages") and is
   never chosen, however often it occurs.
4. **Value** of a sentence: the weights of its units not yet covered by chosen sentences,
   divided by the square root of its unit count, times the speaker's weight (user 1.0, a
   previous summary's line 0.9, assistant 0.4, tool 0.3) and ``1 +`` the fact signals it
   carries: digits or Chinese numerals with a measure word (+1), an e-mail address or link
   (+1), a constraint or personal-fact word (allergy, budget, deadline, flight, phone, must,
   never, 过敏, 预算, 截止, 航班, 电话, 必须 ... +0.8), a date or time word (May, Friday,
   tomorrow, 5月, 周五, 明天 ... +0.6), a capitalised word inside the sentence (a name or
   place, +0.6), first person (I, my, 我 ... +0.4). A question without digits counts 0.7.
   A sentence with none of the first five signals and fewer than 4 content units (a CJK pair
   counting half) is small talk ("Sorry, I got distracted.", "让我想一想。") and never chosen.
5. **Selection**, greedy by value per square root of its tokens (lazily re-scored, so the
   cost stays ``O(n log n)`` in sentences): a chosen sentence covers its units, so an echo or
   a restatement of something chosen is worth nothing afterwards. The budget is a quarter of
   the new messages' estimated tokens plus a quarter of the user's words in them, plus the
   previous summary's size (a cumulative summary grows with the facts instead of shrinking at
   each compression), at least 240 and at most 800 tokens; it is filled while any sentence
   still adds information. If nothing qualifies (only boilerplate), the single best sentence
   is taken, so the summary is never empty.
6. **Output**, in original order (previous summary first), each line with its speaker, under
   a first line that says it is extractive; ``SummaryRecord.model`` is ``"extractive"``.
   Nothing is kept verbatim (keep = []). A later compression reads its own lines back (and
   those of the earlier frequency-based version) as the previous summary's sentences.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import attrs
from aalis_agent import estimate_text_tokens

from aalis_core import gc_paused

HEADER = (
    "[Extractive summary: sentences quoted offline from the conversation, what the user said"
    " first; no model wrote it.]"
)
#: Headers of earlier versions, read back as the previous summary like ours.
LEGACY_HEADERS = (
    "[Extractive summary: key sentences selected offline by word frequency; no model wrote it.]",
)
SENTENCE_CHARS = 300
MIN_BUDGET = 240
MAX_BUDGET = 800
#: Messages a sentence shape must occur in to count as boilerplate.
BOILERPLATE_MESSAGES = 2
#: What stands for quoted text in a sentence's shape.
QUOTE = "<quote>"
#: Tokens a summary line costs beyond its sentence ("- user: ", the line break).
LINE_OVERHEAD = 3

ROLE_WEIGHTS = {"user": 1.0, "summary": 0.9, "assistant": 0.4, "tool": 0.3}
OTHER_ROLE_WEIGHT = 0.4
#: A line of the previous summary keeps its speaker's weight, scaled by this.
CARRIED_WEIGHT = 0.9
QUESTION_WEIGHT = 0.7

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yes",
        "ok",
        "okay",
        "also",
        "about",
        "again",
        "all",
        "any",
        "because",
        "before",
        "after",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "let",
        "lets",
        "us",
        "am",
        "shall",
        "may",
        "might",
        "must",
        "im",
        "ive",
        "ill",
        "id",
        "dont",
        "cant",
        "thats",
        "got",
        "get",
        "go",
        "going",
        "think",
        "know",
        "like",
        "really",
        "thanks",
        "thank",
        "sure",
        "good",
        "great",
        "nice",
        "cool",
        "haha",
        "hi",
        "hello",
        "hey",
        "well",
        "oh",
        "sorry",
        "please",
        "tell",
        "said",
        "see",
        "way",
    ]
)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])|\n+")
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<num>\d+)|(?P<word>[^\W\d_]+(?:['\u2019][^\W\d_]+)?)")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e|approx)\.\Z")
_LINE = re.compile(r"- ([^:]{1,40}): (.*)\Z")

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|'[^']{3,}'")
_QUOTE_MARK = re.compile(r"[\"“”「」]")
_DIGITS = re.compile(r"\d+")
_BLANKS = re.compile(r"\s+")
_PLURAL = re.compile(r"(?<=\w)s\b")

_NUMBER = re.compile(r"\d|[零一二两三四五六七八九十百千万亿]+[元块岁号点个月日年天次人位斤米]")
_CONTACT = re.compile(r"\S+@\S+\.\w|https?://|www\.")
_CONSTRAINT_EN = re.compile(
    r"\b(?:allerg\w*|budget\w*|deadline\w*|due|must|never|always|don'?t|can'?t|cannot|avoid"
    r"|prefer\w*|favou?rite|need\w*|vegetarian|vegan|gluten|lactose|intoleran\w*|flight\w*"
    r"|book(?:ed|ing)?|reserv\w*|phone|mobile|e-?mail|address|live[sd]?|living|born|birthday"
    r"|name[sd]?|called|wife|husband|partner|son|daughter|kids?|children|work(?:s|ing)?|job"
    r"|remind\w*|appointment|meeting|passport|seat|hotel|allowed|at most|at least|before"
    r"|limit|maximum|minimum|max|min|costs?|price|pay|euros?|dollars?|pounds?|yuan)\b"
)
_CONSTRAINT_ZH = re.compile(
    r"过敏|预算|截止|最晚|之前|以前|必须|一定|不能|不要|不吃|不喝|只能|只要|喜欢|讨厌|偏好|需要"
    r"|电话|手机|号码|邮箱|地址|住在|生日|名字|叫|航班|机票|酒店|预订|预约|会议|提醒|老婆|老公"
    r"|妻子|丈夫|儿子|女儿|孩子|工作|公司|职位|素食|海鲜|花生|最多|至少|不超过|价格|花费|元|块钱|别"
    r"|我是|我叫|哥哥|姐姐|弟弟|妹妹|爸爸|妈妈|朋友|同事|老板|经理|医生|老师"
)
_CURRENCY = re.compile(r"[$€£¥]")
_DATE_EN = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|today|tonight|tomorrow|yesterday|weekend|next week"
    r"|next month|morning|evening|noon|midnight|[ap]\.?m\.?)\b"
)
_DATE_ZH = re.compile(r"[月日号]|星期|周[一二三四五六日天末]|明天|后天|今晚|下周|上午|下午|晚上|点")
_CAPITALISED = re.compile(rf"(?<=[\s(,;{_CJK}\u3000-\u303f\uff00-\uffef])[A-Z][\w'\u2019-]*")
_FIRST_PERSON_EN = re.compile(r"\b(?:i|i'm|i\u2019m|i've|i'll|i'd|my|me|mine|we|our|us)\b")

NUMBER_SIGNAL = 1.0
CONTACT_SIGNAL = 1.0
CONSTRAINT_SIGNAL = 0.8
DATE_SIGNAL = 0.6
NAME_SIGNAL = 0.6
FIRST_PERSON_SIGNAL = 0.4
#: Content units (a CJK character pair counts half) below which a sentence without any fact
#: signal is small talk, never chosen while anything else is left.
SMALL_TALK_UNITS = 4
#: The units of a sentence that has none.
_NO_UNITS: tuple[str, ...] = ()


@attrs.define
class _Sentence:
    order: int
    role: str
    text: str
    #: A tuple, not the frozenset ``units_of`` returns: a tuple of strings leaves the garbage
    #: collector's lists, so tens of thousands of candidate sentences do not make every full
    #: collection of the process longer (the iteration order, and so every sum, is the same).
    units: tuple[str, ...]
    cost: int
    weight: float
    boilerplate: bool = False
    small_talk: bool = False


def split_sentences(text: str) -> list[str]:
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = " ".join(piece.split())
        if not piece:
            continue
        if pieces and _ABBREVIATION.search(pieces[-1]):
            pieces[-1] = f"{pieces[-1]} {piece}"  # "Dr. Lee" is one sentence
        else:
            pieces.append(piece)
    sentences = []
    for piece in pieces:
        if len(piece) > SENTENCE_CHARS:
            piece = piece[: SENTENCE_CHARS - 3].rstrip() + "..."
        sentences.append(piece)
    return sentences


def units_of(text: str) -> frozenset[str]:
    """The information units of ``text``: content words, numbers, CJK character pairs."""
    out: set[str] = set()
    for match in _TOKEN.finditer(text.lower()):
        kind = match.lastgroup
        token = match.group(0)
        if kind == "cjk":
            if len(token) == 1:
                out.add(token)
            else:
                out.update(token[i : i + 2] for i in range(len(token) - 1))
        elif kind == "num":
            out.add(token)
        else:
            token = token.replace("\u2019", "'")
            if len(token) >= 2 and token.replace("'", "") not in STOP_WORDS:
                out.add(token)
    return frozenset(out)


def shape_of(text: str) -> str:
    """A sentence with what varies between instances of a template blanked out."""
    text = _QUOTED.sub(QUOTE, text.casefold())
    # A quote that the sentence split cut open: blank it to the end (or from the start).
    mark = _QUOTE_MARK.search(text)
    if mark is not None:
        at = mark.start()
        opening = at == 0 or text[at - 1] in " :(\u3000\uff1a"
        text = text[:at] + QUOTE if opening else QUOTE + text[at + 1 :]
    text = _PLURAL.sub("", _DIGITS.sub("0", text))  # "1 message" and "12 messages" alike
    return _BLANKS.sub(" ", text).strip()


def signals_of(text: str, strong: float | None = None) -> float:
    """``1 +`` the fact signals a sentence carries (docstring of the module, step 4)."""
    lower = text.lower()
    value = 1.0 + (fact_signals(text, lower) if strong is None else strong)
    if _FIRST_PERSON_EN.search(lower) or "我" in text:
        value += FIRST_PERSON_SIGNAL
    if text.rstrip().endswith(("?", "？")) and not _DIGITS.search(text):  # noqa: RUF001
        value *= QUESTION_WEIGHT
    return value


def fact_signals(text: str, lower: str | None = None) -> float:
    """The strong signals alone: numbers, contacts, constraints, dates, names."""
    lower = text.lower() if lower is None else lower
    value = 0.0
    if _NUMBER.search(text) or _CURRENCY.search(text):
        value += NUMBER_SIGNAL
    if _CONTACT.search(text):
        value += CONTACT_SIGNAL
    if _CONSTRAINT_EN.search(lower) or _CONSTRAINT_ZH.search(text):
        value += CONSTRAINT_SIGNAL
    if _DATE_EN.search(lower) or _DATE_ZH.search(text):
        value += DATE_SIGNAL
    if any(m.group(0) not in ("I", "I'm", "I\u2019m") for m in _CAPITALISED.finditer(text)):
        value += NAME_SIGNAL
    return value


def is_small_talk(text: str, units: Iterable[str], strong: float | None = None) -> bool:
    """No fact signal and little content ("Sorry, I got distracted.", "让我想一想。")."""
    if fact_signals(text) if strong is None else strong:
        return False
    size = sum(0.5 if _CJK_CHAR.match(unit) else 1.0 for unit in units)
    return size < SMALL_TALK_UNITS


def _previous_items(previous: str) -> list[tuple[str, str]]:
    """A previous summary as (role, text) items; our own format is read back line by line."""
    lines = previous.strip().splitlines()
    if lines and lines[0].strip() in (HEADER, *LEGACY_HEADERS):
        items = []
        for line in lines[1:]:
            match = _LINE.match(line.strip())
            if match:
                items.append((match.group(1), match.group(2)))
            elif line.strip():
                items.append(("summary", line.strip()))
        return items
    return [("summary", previous)]


def _role_weight(role: str) -> float:
    return ROLE_WEIGHTS.get(role, OTHER_ROLE_WEIGHT)


def _sentences(
    previous: str | None, items: Sequence[tuple[str, str]]
) -> tuple[list[_Sentence], int]:
    """The sentences that can be chosen, with their units and weight, and the summary's
    budget in tokens.

    Boilerplate is left out (it is never chosen, and in a long chat with the stand-in it is
    most of the sentences: keeping an object for each made the working set, not the work,
    grow with the session), except the very first sentence, which the never-empty fallback
    of ``select`` takes when nothing has content.
    """
    sources: Iterable[tuple[str, str]] = items
    carried_count = 0
    if previous and previous.strip():
        carried = _previous_items(previous)
        carried_count = len(carried)
        sources = itertools.chain(carried, items)

    # Pass 1: sentences, their cost and shape. Shapes are counted before anything else is
    # computed, so boilerplate (half of a chat with the stand-in) costs no further work.
    # A piece holds its shape's number, not the shape: one string is kept per shape, not
    # per piece, and a tuple of plain values leaves the garbage collector's lists.
    pieces: list[tuple[str, str, float, int, int]] = []  # role, text, scale, shape, cost
    shapes: dict[str, int] = {}
    last_seen: list[int] = []  # by shape number: the last message it was seen in
    seen_in: list[int] = []  # by shape number: how many messages it was seen in
    total_tokens = user_tokens = previous_tokens = 0
    for message, (role, text) in enumerate(sources):
        carried_line = message < carried_count
        scale = CARRIED_WEIGHT if carried_line else 1.0
        for piece in split_sentences(text):
            cost = estimate_text_tokens(piece)
            if carried_line:
                previous_tokens += cost + LINE_OVERHEAD
            else:
                total_tokens += cost
                if role == "user":
                    user_tokens += cost
            shape = shapes.setdefault(shape_of(piece), len(shapes))
            if shape == len(seen_in):
                last_seen.append(message)
                seen_in.append(1)
            elif last_seen[shape] != message:
                last_seen[shape] = message
                seen_in[shape] += 1
            pieces.append((role, piece, scale, shape, cost))
    del shapes, last_seen

    # Pass 2: units and weights of what can be chosen.
    sentences: list[_Sentence] = []
    for order, (role, piece, scale, shape, cost) in enumerate(pieces):
        # What the user says in one shape is still different facts ("room 12", "room 14").
        if role != "user" and seen_in[shape] >= BOILERPLATE_MESSAGES:
            if order == 0:
                sentences.append(
                    _Sentence(order, role, piece, _NO_UNITS, cost + LINE_OVERHEAD, 0.0, True)
                )
            continue
        # Quoted text in a reply is someone else's words (the stand-in's echo of the user):
        # it adds no information of the reply's own.
        units = tuple(units_of(piece if role == "user" else _QUOTED.sub(" ", piece)))
        strong = fact_signals(piece)
        sentences.append(
            _Sentence(
                order,
                role,
                piece,
                units,
                cost + LINE_OVERHEAD,
                _role_weight(role) * scale * signals_of(piece, strong),
                small_talk=is_small_talk(piece, units, strong),
            )
        )
    return sentences, budget_for(total_tokens, user_tokens, previous_tokens)


def budget_for(total_tokens: int, user_tokens: int, previous_tokens: int = 0) -> int:
    """Tokens the summary may fill: the previous summary's size (a cumulative summary grows
    with the facts, it does not shrink at every compression), plus a quarter of the new
    messages and a quarter of what the user said in them; at least ``MIN_BUDGET``, at most
    ``MAX_BUDGET``."""
    new = (total_tokens + user_tokens) // 4
    return min(MAX_BUDGET, max(MIN_BUDGET, previous_tokens + new))


def select(sentences: Sequence[_Sentence], budget: int) -> list[_Sentence]:
    """Greedy choice by information per sqrt(token), within ``budget`` tokens."""
    holders: Counter[str] = Counter()
    for sentence in sentences:
        holders.update(sentence.units)
    unit_weight = {unit: 1.0 / math.sqrt(count) for unit, count in holders.items()}
    covered: set[str] = set()

    def value(sentence: _Sentence) -> float:
        if sentence.boilerplate or sentence.small_talk or not sentence.units:
            return 0.0
        # fsum: exact, so independent of the set order of the units (which follows the
        # process's string-hash seed); a plain sum broke ties differently in each process.
        fresh = math.fsum([unit_weight[u] for u in sentence.units if u not in covered])
        return sentence.weight * fresh / math.sqrt(len(sentence.units))

    def density(sentence: _Sentence) -> float:
        return value(sentence) / math.sqrt(sentence.cost)

    # Only what is worth something goes into the heap: worth can only fall as units get
    # covered, so a sentence at zero (boilerplate, small talk: most of a long chat) would
    # only be popped and dropped, one ``log n`` step each.
    # Keyed by list index, which follows ``order``: ties go to the earlier sentence.
    heap = [(-d, i) for i, s in enumerate(sentences) if (d := density(s)) > 0.0]
    heapq.heapify(heap)
    chosen: list[_Sentence] = []
    left = budget
    while heap and left > 0:
        stale, index = heapq.heappop(heap)
        sentence = sentences[index]
        if sentence.cost > left:
            continue  # never fits again: the budget only shrinks
        current = density(sentence)
        if current <= 0.0:
            continue
        if heap and current < -heap[0][0] and current < -stale:
            heapq.heappush(heap, (-current, index))  # worth less now: re-rank it
            continue
        chosen.append(sentence)
        covered.update(sentence.units)
        left -= sentence.cost
    if not chosen and sentences:
        # Only boilerplate or text without content words: one sentence, so never empty.
        chosen.append(max(sentences, key=lambda s: (s.weight * len(s.units), -s.order)))
    chosen.sort(key=lambda s: s.order)
    return chosen


def summarise(previous: str | None, items: Sequence[tuple[str, str]]) -> str:
    """An extractive summary of ``items`` (role, text) merged with ``previous``."""
    # A long span makes tens of thousands of sentence objects that live until the end:
    # without the pause they trigger full collections of the whole process (aalis_core._gc_pause).
    with gc_paused():
        sentences, budget = _sentences(previous, items)
        if not sentences:
            return ""
        chosen = select(sentences, budget)
    body = "\n".join(f"- {s.role}: {s.text}" for s in chosen)
    return f"{HEADER}\n{body}"


__all__ = [
    "HEADER",
    "LEGACY_HEADERS",
    "STOP_WORDS",
    "budget_for",
    "fact_signals",
    "is_small_talk",
    "shape_of",
    "signals_of",
    "split_sentences",
    "summarise",
    "units_of",
]
