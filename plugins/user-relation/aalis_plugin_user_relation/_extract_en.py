"""The offline extractor's English rules: self-statements, one sentence at a time.

Only first-person statements count ("I live in Lyon", "my sister is called Mia"): what a
person says about someone else is not a fact about that person. Questions, conditionals and
hypotheticals are skipped, so "where do I live?" never becomes a fact. A rule returns
``Draft`` values; consolidation decides what they change.
"""

from __future__ import annotations

import re

from aalis_plugin_user_relation._drafts import Draft, LazyPattern, clean, lazy

#: A value runs to the end of the clause.
_V = r"(?P<v>(?:(?!\s+(?:and|but|so|because)\s+(?:I|my|I'm)\b)[^,.;!?])+)"
#: A place or a name: capitalised words (with a few lower-case joiners).
_CAP = r"(?P<v>[A-Z][\w'-]*(?:[ -](?:[A-Z][\w'-]*|(?:de|del|da|am|upon|on|la|le)\b(?=[ -][A-Z])))*)"
_I = r"(?:^|(?<=[\s,;:]))I"

_JOBS = (
    r"(?:(?:software|civil|data|mechanical|electrical|sound|chemical)\s+)?"
    r"(?:teacher|nurse|doctor|engineer|developer|programmer|designer|lawyer|student|chef|"
    r"accountant|scientist|writer|journalist|architect|pilot|researcher|manager|"
    r"photographer|musician|dentist|pharmacist|professor|translator|consultant|"
    r"librarian|baker|electrician|plumber|paramedic|firefighter|veterinarian|vet|"
    r"analyst|economist|editor|artist|carpenter|farmer|therapist|surgeon)"
)
_PARTNERS = r"wife|husband|partner|boyfriend|girlfriend|fiancée?"
_RELATIVES = r"sister|brother|son|daughter|mother|mum|mom|father|dad|grandmother|grandfather"
_PETS = r"dog|cat|puppy|kitten|rabbit|parrot|hamster|bird|turtle|horse|goldfish"
_NAMED = r"(?:(?i:'s name is|\s+is called|\s+is named|,?\s+named|,?\s+called)\s+|\s+)"
_DIETS = r"vegetarian|vegan|pescatarian|pescetarian"
_HEALTH = r"diabetes|diabetic|asthma|celiac disease|coeliac disease|high blood pressure|epilepsy"

#: (attribute, pattern, how the value is built from the match)
RULES: list[tuple[str, LazyPattern]] = [
    ("name", lazy(r"(?i:\bmy name is|\bcall me|\bI'm called|\bI am called)\s+" + _CAP)),
    (
        "city",
        lazy(
            _I + r"(?i:(?:'ve| have)?\s+(?:just |recently |now |finally |since )?"
            r"(?:moved|relocated)\s+(?:back\s+)?to)\s+" + _CAP
        ),
    ),
    (
        "city",
        lazy(
            _I + r"(?i:(?:'m| am)?\s+(?:now |currently |still |actually )?"
            r"(?:live|living|based|settled)\s+in)\s+" + _CAP
        ),
    ),
    ("city", lazy(r"(?i:\bmy (?:new )?(?:home|apartment|flat) is in)\s+" + _CAP)),
    (
        "employer",
        lazy(
            _I + r"(?i:(?:\s+now|\s+currently|\s+still)?\s+work\s+(?:at|for)|"
            r"(?:'ve| have)?\s+(?:just\s+)?(?:joined|started at)|"
            r"(?:'m| am)\s+(?:now\s+)?employed\s+(?:at|by))\s+" + _V
        ),
    ),
    (
        "job",
        lazy(_I + r"(?i:\s+work\s+as|(?:'m| am)\s+(?:now\s+)?working\s+as)\s+(?:an?\s+)?" + _V),
    ),
    ("job", lazy(r"(?i:\bmy (?:job|profession) is)\s+(?:an?\s+)?" + _V)),
    (
        "job",
        lazy(_I + r"(?i:(?:'m| am)\s+(?:now\s+)?an?\s+)(?P<v>" + _JOBS + r")\b", re.I),
    ),
    (
        "diet",
        lazy(
            _I + r"(?i:(?:'m| am)\s+(?:now\s+|a\s+|strictly\s+)*|\s+(?:went|became|turned)\s+|"
            r"(?:'ve| have)\s+(?:gone|become)\s+)(?P<v>" + _DIETS + r")",
            re.I,
        ),
    ),
    (
        "allergy",
        lazy(_I + r"(?i:(?:'m| am)\s+(?:severely |very |mildly |also )?allergic\s+to)\s+" + _V),
    ),
    ("allergy", lazy(_I + r"(?i:\s+have\s+an?\s+)(?P<v>[\w-]+)(?i:\s+allergy)")),
    ("health", lazy(_I + r"(?i:(?:'m| am)\s+)(?P<v>lactose intolerant)", re.I)),
    ("health", lazy(_I + r"(?i:\s+have\s+|(?:'m| am)\s+)(?P<v>" + _HEALTH + r")", re.I)),
    (
        "health",
        lazy(_I + r"(?i:\s+(?:can't|cannot|can not|don't|do not|must not)\s+eat)\s+" + _V),
    ),
    (
        "partner",
        lazy(r"(?i:\bmy\s+)(?P<rel>(?i:" + _PARTNERS + r"))" + _NAMED + _CAP),
    ),
    (
        "family",
        lazy(r"(?i:\bmy\s+)(?P<rel>(?i:" + _RELATIVES + r"))" + _NAMED + _CAP),
    ),
    (
        "pet",
        lazy(
            r"(?i:\bI\s+have\s+an?|\bI(?:'ve| have)\s+got\s+an?|\bI\s+(?:just\s+)?adopted\s+an?|"
            r"\bmy)\s+(?P<rel>(?i:" + _PETS + r"))(?:" + _NAMED + r"(?P<v>[A-Z][\w'-]*))?"
        ),
    ),
    (
        "email",
        lazy(r"(?i:\bmy (?:new )?e-?mail(?: address)? is)\s+(?P<v>[\w.+-]+@[\w-]+\.[\w.-]*\w)"),
    ),
    (
        "phone",
        lazy(
            r"(?i:\bmy (?:new )?(?:phone|mobile|cell)(?: number)? is)\s+(?P<v>\+?\d[\d ()-]{4,}\d)"
        ),
    ),
    ("birthday", lazy(r"(?i:\bmy birthday is(?: on)?|\bI was born on)\s+" + _V)),
    (
        "date",
        lazy(
            r"(?i:\bmy\s+)(?P<rel>(?i:anniversary|wedding|exam|interview|surgery|appointment|"
            r"due date))(?i:\s+is(?:\s+on)?)\s+" + _V
        ),
    ),
    ("favourite", lazy(r"(?i:\bmy favou?rite\s+)(?P<rel>\w+)(?i:\s+is)\s+" + _V)),
    (
        "dislikes",
        lazy(
            _I + r"(?i:\s+(?:really\s+)?(?:hate|dislike|detest|can't stand|don't (?:really )?"
            r"(?:like|enjoy)|do not like|no longer like))\s+" + _V
        ),
    ),
    (
        "likes",
        lazy(
            _I + r"(?i:\s+(?:really\s+|absolutely\s+|also\s+|now\s+)?"
            r"(?:love|like|enjoy|adore|prefer))\s+" + _V
        ),
    ),
    (
        "plan",
        lazy(
            _I + r"(?i:(?:'m| am)\s+(?:planning|hoping|intending)\s+to|\s+plan\s+to|"
            r"(?:'m| am)\s+thinking\s+of)\s+" + _V
        ),
    ),
    ("plan", lazy(_I + r"(?i:(?:'m| am)\s+(?:moving)\s+to)\s+(?P<v>[^,.;!?]+)")),
]

_CORRECTIONS = [
    # "actually it's the 14th, not the 4th"
    lazy(
        r"(?i:\b(?:actually|sorry|correction|no)\b[,:]?\s+(?:it'?s|it is|that'?s|that is|"
        r"I meant|I mean)?\s*)(?P<new>[^,.;!?]+?),?\s+(?i:not)\s+(?P<old>[^,.;!?]+)"
    ),
    # "not the 4th but the 14th"
    lazy(r"(?i:\bnot)\s+(?P<old>[^,.;!?]+?),?\s+(?i:but)\s+(?P<new>[^,.;!?]+)"),
]

_SKIP = lazy(
    r"(?i:\b(?:if|would|wonder|suppose|imagine|pretend|maybe|might|could|should)\b|"
    r"^\s*(?:where|what|who|when|why|how|do|does|did|is|are|can|will)\b)"
)
_NOT_LIKED = {"it", "that", "this", "them", "you", "the idea", "to", "him", "her", "so"}


def _values(attribute: str, match: re.Match[str]) -> list[tuple[str, str]]:
    """The (attribute, value) pairs one match states: "I joined Initech as a designer" is
    an employer and a job."""
    if attribute in ("employer", "job"):
        value = clean(match.group("v"))
        if (
            attribute == "employer"
            and (split := re.split(r"\s+as\s+(?:an?\s+)?", value, maxsplit=1))[1:]
        ):
            return [("employer", split[0]), ("job", clean(split[1]))]
        if attribute == "job":
            value = re.split(r"\s+(?:at|in|for)\s+", value, maxsplit=1)[0]
        return [(attribute, value)] if value else []
    built = _value(attribute, match)
    return [] if built is None else [built]


def _value(attribute: str, match: re.Match[str]) -> tuple[str, str] | None:
    groups = match.groupdict()
    value = clean(groups.get("v") or "")
    rel = (groups.get("rel") or "").lower()
    if attribute == "pet":
        return ("pet", f"{rel} {value}".strip())
    if not value:
        return None
    if attribute in ("partner", "family"):
        return (attribute, f"{value} ({rel})")
    if attribute == "date":
        return (rel, value)
    if attribute == "favourite":
        return (f"favourite {rel}", value)
    if attribute == "plan" and "moving" in match.group(0).lower():
        return ("plan", f"move to {value}")
    if attribute in ("likes", "dislikes"):
        if value.lower() in _NOT_LIKED or value.lower().startswith(("it ", "that ", "you ")):
            return None
        value = re.sub(r"^to\s+", "", value)
        value = re.split(r"\s+(?:over|rather than|more than)\s+", value)[0]
    if attribute == "health" and " eat" in match.group(0).lower():
        return ("health", f"does not eat {value}")
    return (attribute, value)


def extract_en(sentence: str) -> list[Draft]:
    """The self-statements in one English sentence."""
    text = sentence.strip()
    if not text or text.endswith("?") or _SKIP.search(text):
        return []
    for pattern in _CORRECTIONS:
        found = pattern.search(text)
        if found:
            new, old = norm_words(clean(found.group("new"))), clean(found.group("old"))
            if new and old and new != norm_words(old):
                return [Draft("*", new, corrects=old)]
    drafts: list[Draft] = []
    taken: list[tuple[int, int]] = []
    for attribute, pattern in RULES:
        for found in pattern.finditer(text):
            span = found.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue  # an earlier rule read these words already
            built = _values(attribute, found)
            drafts += [Draft(name, value) for name, value in built if value]
            if built:
                taken.append(span)
    return drafts


def norm_words(text: str) -> str:
    return re.sub(r"^(the|a|an) ", "", " ".join(text.lower().split()))


__all__ = ["RULES", "extract_en"]
