"""The lexical leg's terms: how a text becomes the words a lexical search matches.

Embeddings blur exact tokens: "order AX-55812-K" and "order AX-55813-K" are neighbours in
any vector space, and so are 王磊 and 王蕾. The lexical leg finds them by their letters, and
ranks them by a rule that knows an identifier when it sees one (docs/recall.md, "Lexical
leg"). Every store computes the same terms from the same text, so they agree on what
matches; the scoring (BM25 with the identifier tier) is each store's, in its own query.

* ``words``: casefolded (NFKC) alphanumeric words of two characters or more that are not
  English stop words, the parts of identifiers, and for every run of CJK characters its
  bigrams in order (a one-character run is kept whole). Bigrams make a two-character name
  (王磊) one term, which a trigram tokenizer cannot match at all.
* ``identifiers``: whole tokens shaped like identifiers — with a digit (``AX-55812-K``,
  ``v2``, ``55812``), an inner ``-``, ``_`` or ``.`` (``parse_refund_window``), or
  CamelCase (``ParseRefundWindow``) — casefolded, plus Chinese personal names spotted by
  a common surname followed by a CJK character (the surname and the next character:
  ``王磊`` in ``上次王磊问的``). A document holding more of the exact identifiers the
  query names ranks above every document holding fewer (the "identifier tier").
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

import attrs

#: CJK ideographs (with extension A and compatibility), kana and hangul: scripts written
#: without spaces, indexed as character bigrams.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
#: A CJK run, or a token: word characters (not CJK) with inner ``-``, ``_``, ``.`` kept, so
#: an identifier stays whole (its parts are split out afterwards).
_WORD_CHAR = f"(?:(?![{_CJK}])[^\\W_])"


@functools.cache
def _scan() -> re.Pattern[str]:
    """The tokenising pattern, compiled at first use: its CJK class costs milliseconds to
    compile, which every process that merely imports a vector store would pay."""
    return re.compile(f"(?P<cjk>[{_CJK}]+)|(?P<token>{_WORD_CHAR}+(?:[-_.]{_WORD_CHAR}+)*)")


_PART = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CAMEL_SPLIT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

#: Common Chinese surnames (the most frequent ~90, without the ones that are mostly
#: function words or everyday morphemes: 于, 向, 万, 方, 高, 白, 金, 石, 马, 和, 同).
_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡"
    "余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范廖贾夏韦付邹孟熊秦邱江尹薛闫段雷侯龙"
    "史陶黎贺顾毛郝龚邵钱严覃武戴莫孔汤欧诸葛"
)

#: English words too common to say anything about which message is meant.
_STOP = frozenset(
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
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "about",
        "can",
        "could",
        "would",
        "should",
        "just",
        "than",
        "also",
        "any",
        "all",
    ]
)


@attrs.frozen
class LexicalTerms:
    """The terms of one text: ``words`` for BM25, ``identifiers`` for the exact tier."""

    words: tuple[str, ...]
    identifiers: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.words or self.identifiers)


def _is_identifier(token: str) -> bool:
    return (
        (len(token) > 1 and any(ch.isdigit() for ch in token))
        or any(ch in "-_." for ch in token)
        or bool(_CAMEL.search(token))
    )


def _parts(token: str) -> list[str]:
    parts: list[str] = []
    for piece in _PART.findall(token):
        split = _CAMEL_SPLIT.findall(piece) if _CAMEL.search(piece) else [piece]
        parts.extend(split or [piece])
    return parts


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _names(run: str) -> list[str]:
    # A name's second character starts no name of its own (王雷问: 王雷, not also 雷问).
    names: list[str] = []
    i = 0
    while i < len(run) - 1:
        if run[i] in _SURNAMES and "\u4e00" <= run[i + 1] <= "\u9fff":
            names.append(run[i : i + 2])
            i += 2
        else:
            i += 1
    return names


def lexical_terms(text: str) -> LexicalTerms:
    """The terms of ``text`` (a stored message or a query), in order of appearance.

    Documents and queries go through the same function, which is what makes an identifier
    in a query match the same identifier in a message, whatever its case or width.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    normal = unicodedata.normalize("NFKC", text)
    words: list[str] = []
    identifiers: list[str] = []
    for match in _scan().finditer(normal):
        run, token = match.group("cjk"), match.group("token")
        if run:
            words.extend(_bigrams(run))
            identifiers.extend(_names(run))
        elif _is_identifier(token):
            identifiers.append(token.casefold())
            words.extend(part.casefold() for part in _parts(token) if len(part) > 1)
        else:
            word = token.casefold()
            if len(word) > 1 and word not in _STOP:
                words.append(word)
    return LexicalTerms(words=tuple(words), identifiers=tuple(identifiers))


#: BM25's constants (FTS5's own) and the weight of the identifier column against words.
K1 = 1.2
B = 0.75
IDENTIFIER_WEIGHT = 2.0


def idf(total: int, having: int) -> float:
    """BM25's inverse document frequency, floored as FTS5 floors it (never zero or less)."""
    value = math.log((total - having + 0.5) / (having + 0.5))
    return value if value > 0.0 else 1e-6


def tier_score(tier: int, bm25: float) -> float:
    """One score from the identifier tier and a positive BM25: higher is better, > 0.

    The tier is the integer part, so every document holding more of the query's
    identifiers outranks every one holding fewer; BM25 orders a tier within (0, 1).
    """
    return tier + bm25 / (1.0 + bm25)


class Bm25Column:
    """One column's statistics over a corpus (the reference store's BM25, FTS5's formula)."""

    def __init__(self, docs: Sequence[Sequence[str]]) -> None:
        self.total = len(docs)
        self.avgdl = (sum(len(doc) for doc in docs) / self.total) if self.total else 0.0
        self.df: dict[str, int] = {}
        for doc in docs:
            for term in set(doc):
                self.df[term] = self.df.get(term, 0) + 1

    def score(self, query: Iterable[str], doc: Sequence[str]) -> float:
        if not doc:
            return 0.0
        counts: dict[str, int] = {}
        for term in doc:
            counts[term] = counts.get(term, 0) + 1
        norm = K1 * (1.0 - B + B * len(doc) / self.avgdl)
        total = 0.0
        for term in query:
            tf = counts.get(term, 0)
            if tf:
                total += idf(self.total, self.df[term]) * tf * (K1 + 1.0) / (tf + norm)
        return total


__all__ = ["LexicalTerms", "lexical_terms"]
