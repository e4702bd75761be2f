# ruff: noqa: RUF001  (Chinese text uses full-width punctuation, as it should)
"""The identifier set of ``recall_quality.py``: many questions in the same words, one token apart.

A user's history holds dozens of messages about orders, plates, versions, function names,
people and places, all written in the same few sentences; only the identifier differs. For
each query (which names one identifier) the history holds:

* the **target**: the message that carries that identifier (the one that must rank first);
* two **siblings**: the same sentence about a near-identical identifier, with other facts
  (``AX-55813-K`` for ``AX-55812-K``, ``王蕾`` for ``王磊``, ``parse_refund_windows`` for
  ``parse_refund_window``, ``沪A·12354`` for ``沪A·12345``, ``v2.14.8`` for ``v2.14.3``);
* one **echo**: an earlier question in the query's own words about another near-identical
  identifier (``Where was order AX-55813-K shipped to?``), the hardest distractor: it
  repeats every word of the query but the one that matters.

Queries come in four groups: English (``en``), Chinese (``zh``) and cross-lingual, an
English query about a Chinese memory (``en>zh``) and the reverse (``zh>en``); in the
cross-lingual cases the siblings are in the memory's language and the echo in the query's.
Every other case's messages of the same family are further distractors, since they share the
wording too. Identifiers are unique across the whole set.

The set is generated, deterministically: ``build(seed)`` with the default seed gives the same
texts on every machine and Python version (``random.Random`` with an integer seed, and every
choice made from tuples in a fixed order).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

SEED = 2027

#: Cases per family and group in the full set, and in ``--quick``.
FULL = {"en": 9, "zh": 9, "en>zh": 2, "zh>en": 2}
QUICK = {"en": 1, "zh": 1, "en>zh": 1, "zh>en": 0}


@dataclass(frozen=True)
class Case:
    """One query, the message it asks for, and the messages that look like it."""

    group: str  # en, zh, en>zh, zh>en
    family: str
    identifier: str
    near: tuple[str, str, str]  # the identifiers of the two siblings and of the echo
    query: str
    target: str
    distractors: tuple[str, ...]


@dataclass(frozen=True)
class Memories:
    """Every message of the history (targets and distractors, shuffled) and the cases;
    ``target_of[i]`` is the index in ``texts`` of case ``i``'s target."""

    texts: tuple[str, ...]
    cases: tuple[Case, ...]
    target_of: tuple[int, ...]


# -- facts: the parts of a sentence that differ between siblings, in both languages ---------

CITIES = (
    ("Rotterdam", "鹿特丹"),
    ("Lyon", "里昂"),
    ("Porto", "波尔图"),
    ("Gdansk", "格但斯克"),
    ("Leipzig", "莱比锡"),
    ("Chengdu", "成都"),
    ("Xiamen", "厦门"),
    ("Wuhan", "武汉"),
    ("Hangzhou", "杭州"),
    ("Kunming", "昆明"),
)
DAYS = (
    ("Monday", "周一"),
    ("Tuesday", "周二"),
    ("Wednesday", "周三"),
    ("Thursday", "周四"),
    ("Friday", "周五"),
    ("Saturday", "周六"),
)
COMPONENTS = (
    ("checkout page", "结账页面"),
    ("login form", "登录表单"),
    ("invoice export", "发票导出"),
    ("search index", "搜索索引"),
    ("payment retry", "支付重试"),
    ("push notification", "推送通知"),
)
DEPENDENCIES = (
    ("the Postgres driver", "Postgres 驱动"),
    ("the Redis client", "Redis 客户端"),
    ("the TLS library", "TLS 库"),
    ("the PDF renderer", "PDF 渲染器"),
    ("the image resizer", "图片压缩模块"),
)
PEOPLE = (("Ms Okafor", "奥卡福"), ("Mr Brandt", "勃兰特"), ("Ms Duarte", "杜阿尔特"))
THINGS = (("payload", "请求体"), ("config", "配置"), ("cursor", "游标"), ("header", "请求头"))
MODULES = ("billing/refunds.py", "core/ledger.py", "api/handlers.py", "jobs/nightly.py")


def _facts(rng: random.Random) -> dict[str, str]:
    city, city_zh = rng.choice(CITIES)
    day, day_zh = rng.choice(DAYS)
    comp, comp_zh = rng.choice(COMPONENTS)
    dep, dep_zh = rng.choice(DEPENDENCIES)
    who, who_zh = rng.choice(PEOPLE)
    thing, thing_zh = rng.choice(THINGS)
    hour, minute = rng.randint(6, 22), rng.choice((5, 15, 20, 35, 40, 50))
    return {
        "city": city,
        "city_zh": city_zh,
        "day": day,
        "day_zh": day_zh,
        "comp": comp,
        "comp_zh": comp_zh,
        "dep": dep,
        "dep_zh": dep_zh,
        "who": who,
        "who_zh": who_zh,
        "thing": thing,
        "thing_zh": thing_zh,
        "module": rng.choice(MODULES),
        "amount": str(rng.randint(12, 980)),
        "level": str(rng.randint(1, 6)),
        "pct": str(rng.randint(81, 99)),
        "gate": f"{rng.choice('ABCDE')}{rng.randint(2, 48)}",
        "time": f"{hour:02d}:{minute:02d}",
    }


# -- identifiers and their near misses -------------------------------------------------------

Ids = tuple[str, tuple[str, str, str]]


def _swap_last(digits: str) -> str:
    return digits[:-2] + digits[-1] + digits[-2]


def _bump_last(digits: str) -> str:
    return digits[:-1] + str((int(digits[-1]) + 1) % 10)


def _digits(rng: random.Random, n: int) -> str:
    """``n`` digits whose last two differ (so swapping them changes the number)."""
    while True:
        text = "".join(rng.choice(string.digits[1:] if i == 0 else string.digits) for i in range(n))
        if text[-1] != text[-2]:
            return text


def _order(rng: random.Random) -> Ids:
    head, tail, num = (
        rng.choice(("AX", "BQ", "KT", "MZ", "RW")),
        rng.choice("KLMPRTX"),
        _digits(rng, 5),
    )
    other = rng.choice([c for c in "KLMPRTX" if c != tail])
    return f"{head}-{num}-{tail}", (
        f"{head}-{_bump_last(num)}-{tail}",
        f"{head}-{_swap_last(num)}-{tail}",
        f"{head}-{num}-{other}",
    )


def _plate(rng: random.Random) -> Ids:
    province, letter, num = rng.choice("沪京粤浙苏川鄂湘"), rng.choice("ABCDEF"), _digits(rng, 5)
    other = rng.choice([c for c in "沪京粤浙苏川鄂湘" if c != province])
    return f"{province}{letter}·{num}", (
        f"{province}{letter}·{_swap_last(num)}",
        f"{other}{letter}·{num}",
        f"{province}{letter}·{_bump_last(num)}",
    )


def _version(rng: random.Random) -> Ids:
    major, minor, patch = rng.randint(1, 5), rng.randint(2, 19), rng.randint(0, 9)
    return f"v{major}.{minor}.{patch}", (
        f"v{major}.{minor}.{(patch + 5) % 10}",
        f"v{major}.{minor + 1}.{patch}",
        f"v{major}.{minor}.{patch}{rng.randint(1, 9)}",
    )


VERBS = ("parse", "load", "sync", "build", "fetch", "render", "apply", "merge", "validate")
NOUNS = ("refund", "invoice", "session", "ledger", "quota", "shipment", "coupon", "payout")
TAILS = ("window", "batch", "limit", "header", "schedule", "entry", "policy", "rule")


def _function(rng: random.Random) -> Ids:
    verb, noun, tail = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(TAILS)
    name = f"{verb}_{noun}_{tail}"
    return name, (f"{name}s", f"{verb}_{noun}s_{tail}", f"{name}_v2")


FIRST_NAMES = ("Anna", "Jon", "Erik", "Lena", "Mark", "Sara", "Nils", "Eva", "Tom", "Ida")
SURNAMES = (
    ("Petersen", "Pedersen", "Peterson"),
    ("Meyer", "Meier", "Mayer"),
    ("Schmidt", "Schmitt", "Schmid"),
    ("Nielsen", "Nilsen", "Neilsen"),
    ("Hansen", "Hanson", "Hanssen"),
    ("Fischer", "Fisher", "Fischler"),
    ("Carlsson", "Karlsson", "Carlson"),
    ("Lindqvist", "Lindquist", "Lindkvist"),
    ("Thomson", "Thompson", "Tomson"),
    ("Stewart", "Stuart", "Steward"),
    ("Philips", "Phillips", "Filips"),
    ("Mackenzie", "McKenzie", "MacKenzy"),
)
CHINESE_NAMES = (
    ("王磊", "王蕾", "王垒"),
    ("李静", "李晶", "李菁"),
    ("张伟", "张玮", "张薇"),
    ("刘洋", "刘阳", "刘扬"),
    ("陈晨", "陈辰", "陈琛"),
    ("赵敏", "赵闵", "赵珉"),
    ("杨帆", "杨凡", "杨璠"),
    ("周婷", "周霆", "周亭"),
    ("吴昊", "吴浩", "吴皓"),
    ("孙丽", "孙莉", "孙俐"),
    ("黄鑫", "黄欣", "黄馨"),
    ("徐静", "徐菁", "徐婧"),
    ("马骏", "马俊", "马峻"),
    ("林峰", "林锋", "林枫"),
    ("高鹏", "高朋", "高芃"),
)
PLACES = (
    ("Hollum", "Hallum", "Hellum"),
    ("Burgum", "Bergum", "Birdum"),
    ("Kollum", "Kolham", "Kollhorn"),
    ("Usquert", "Uskwert", "Usquart"),
    ("Wirdum", "Wierum", "Warfum"),
    ("Ulrum", "Uldrum", "Ulrom"),
    ("Marrum", "Marum", "Morrum"),
    ("Baflo", "Barlo", "Bafle"),
    ("Westerbork", "Westerbeek", "Westerlee"),
    ("Oosterend", "Oosterwolde", "Oosterbeek"),
    ("Eenrum", "Eenum", "Enrum"),
)
CHINESE_PLACES = (
    ("歙县", "黟县", "泾县"),
    ("湄洲岛", "涠洲岛", "南麂岛"),
    ("永泰", "永春", "永定"),
    ("德清", "德化", "德安"),
    ("镇远", "镇宁", "镇雄"),
    ("临海", "临安", "临沂"),
    ("江山", "江油", "江阴"),
    ("宁海", "宁德", "宁乡"),
    ("武夷山", "武当山", "武功山"),
    ("婺源", "婺城", "婺江"),
    ("建德", "建瓯", "建宁"),
)


def _from_sets(sets: tuple[tuple[str, str, str], ...]) -> Callable[[random.Random], Ids]:
    def pick(rng: random.Random) -> Ids:
        first, second, third = rng.choice(sets)
        return first, (second, third, second)

    return pick


def _person(rng: random.Random) -> Ids:
    first, (a, b, c) = rng.choice(FIRST_NAMES), rng.choice(SURNAMES)
    return f"{first} {a}", (f"{first} {b}", f"{first} {c}", f"{first} {b}")


def _ticket(rng: random.Random) -> Ids:
    prefixes = ("INC", "OPS", "SUP", "BUG", "REQ")
    prefix, num = rng.choice(prefixes), _digits(rng, 5)
    other = rng.choice([p for p in prefixes if p != prefix])
    return f"{prefix}-{num}", (
        f"{prefix}-{_swap_last(num)}",
        f"{prefix}-{_bump_last(num)}",
        f"{other}-{num}",
    )


def _flight(rng: random.Random) -> Ids:
    airlines = ("CA", "MU", "LH", "KL", "BA", "CZ", "AF")
    airline, num = rng.choice(airlines), _digits(rng, 4)
    other = rng.choice([a for a in airlines if a != airline])
    return f"{airline}{num}", (
        f"{airline}{_swap_last(num)}",
        f"{airline}{_bump_last(num)}",
        f"{other}{num}",
    )


def _host(rng: random.Random) -> Ids:
    if rng.random() < 0.5:
        role, env, num = (
            rng.choice(("db", "cache", "api", "worker", "search")),
            rng.choice(("prod", "stage")),
            _digits(rng, 2),
        )
        flip = "stage" if env == "prod" else "prod"
        return f"{role}-{env}-{num}", (
            f"{role}-{env}-{_swap_last(num)}",
            f"{role}-{env}-{_bump_last(num)}",
            f"{role}-{flip}-{num}",
        )
    a, b, c = rng.randint(1, 250), rng.randint(1, 250), _digits(rng, 2)
    return f"10.{a}.{b}.{c}", (
        f"10.{a}.{b}.{_swap_last(c)}",
        f"10.{a}.{b}.{_bump_last(c)}",
        f"10.{a}.{b + 1}.{c}",
    )


def _parcel(rng: random.Random) -> Ids:
    num = _digits(rng, 10)
    middle = num[:4] + str((int(num[4]) + 3) % 10) + num[5:]
    return f"SF{num}", (f"SF{_swap_last(num)}", f"SF{middle}", f"YT{num}")


def _room(rng: random.Random) -> Ids:
    floor, wing, num = rng.randint(2, 9), rng.choice("ABCD"), _digits(rng, 3)
    other = rng.choice([w for w in "ABCD" if w != wing])
    return f"{floor}{wing}-{num}", (
        f"{floor}{wing}-{_swap_last(num)}",
        f"{floor}{other}-{num}",
        f"{floor + 1}{wing}-{num}",
    )


def _commit(rng: random.Random) -> Ids:
    while True:
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        if sha[-1] != sha[-2]:
            break
    last = "0123456789abcdef"[("0123456789abcdef".index(sha[-1]) + 1) % 16]
    return sha, (sha[:-2] + sha[-1] + sha[-2], sha[:-1] + last, sha[2:] + sha[:2])


# -- families: identifiers and the sentences around them (en statement, en query, zh ...) -------

Template = tuple[str, str, str, str]

FAMILIES: dict[str, tuple[Callable[[random.Random], Ids], tuple[Template, ...]]] = {
    "order": (
        _order,
        (
            (
                "Order {id} was shipped to {city} on {day}.",
                "Where was order {id} shipped to?",
                "订单{id}已经在{day_zh}发往{city_zh}了。",
                "订单{id}发到哪里去了？",
            ),
            (
                "The refund for order {id} was approved: {amount} euros back to my card.",
                "How much was refunded for order {id}?",
                "订单{id}的退款批下来了，退回{amount}元到卡上。",
                "订单{id}退了多少钱？",
            ),
        ),
    ),
    "plate": (
        _plate,
        (
            (
                "The car with plate {id} is parked on level {level} of the {city} garage.",
                "Where is the car with plate {id} parked?",
                "车牌{id}的车停在{city_zh}停车场{level}层。",
                "车牌{id}的车停在哪里？",
            ),
            (
                "The speeding fine for plate {id} is {amount} euros, due by {day}.",
                "How much is the speeding fine for plate {id}?",
                "车牌{id}的超速罚单是{amount}元，{day_zh}前要交。",
                "车牌{id}的超速罚单要交多少钱？",
            ),
        ),
    ),
    "version": (
        _version,
        (
            (
                "The {comp} bug first appeared in {id}, after the {day} deploy.",
                "Which bug first appeared in {id}?",
                "{comp_zh}的bug是从{id}开始出现的，{day_zh}上线之后。",
                "{id}开始出现的是哪个bug？",
            ),
            (
                "Release {id} needs {dep} to be upgraded first.",
                "What has to be upgraded before release {id}?",
                "发布{id}之前要先升级{dep_zh}。",
                "发布{id}之前要先升级什么？",
            ),
        ),
    ),
    "function": (
        _function,
        (
            (
                "`{id}` raises a KeyError when the {thing} is empty.",
                "When does `{id}` raise a KeyError?",
                "`{id}` 在{thing_zh}为空时会抛 KeyError。",
                "`{id}` 什么时候会抛 KeyError？",
            ),
            (
                "`{id}` is defined in {module} and only the {day} job calls it.",
                "Which file is `{id}` defined in?",
                "`{id}` 定义在 {module} 里，只有{day_zh}的任务会调用。",
                "`{id}` 定义在哪个文件里？",
            ),
        ),
    ),
    "ticket": (
        _ticket,
        (
            (
                "Ticket {id} was assigned to {who} and is blocked on {dep}.",
                "Who is handling ticket {id}?",
                "工单{id}分给了{who_zh}，卡在{dep_zh}上。",
                "工单{id}是谁在处理？",
            ),
        ),
    ),
    "flight": (
        _flight,
        (
            (
                "My flight {id} leaves from gate {gate} at {time}.",
                "Which gate does flight {id} leave from?",
                "我的航班{id}在{gate}登机口，{time}起飞。",
                "航班{id}在哪个登机口？",
            ),
        ),
    ),
    "host": (
        _host,
        (
            (
                "The disk on {id} is {pct}% full and it alerts every night.",
                "How full is the disk on {id}?",
                "{id}的磁盘用到了{pct}%，每天晚上都报警。",
                "{id}的磁盘用了多少？",
            ),
        ),
    ),
    "parcel": (
        _parcel,
        (
            (
                "Parcel {id} is held at the {city} depot until {day}.",
                "Where is parcel {id} held?",
                "快递{id}压在{city_zh}转运中心，{day_zh}才放行。",
                "快递{id}压在哪里？",
            ),
        ),
    ),
    "room": (
        _room,
        (
            (
                "Meeting room {id} has a broken projector; facilities come on {day}.",
                "When will the projector in meeting room {id} be fixed?",
                "{id}会议室的投影仪坏了，{day_zh}来修。",
                "{id}会议室的投影仪什么时候修？",
            ),
        ),
    ),
    "commit": (
        _commit,
        (
            (
                "Commit {id} reverted the {comp} change.",
                "What did commit {id} revert?",
                "提交{id}回滚了{comp_zh}的改动。",
                "提交{id}回滚了什么？",
            ),
        ),
    ),
    "person": (
        _person,
        (
            (
                "{id} from the {city} office starts on {day}.",
                "When does {id} start?",
                "{id}是{city_zh}办公室的，{day_zh}入职。",
                "{id}什么时候入职？",
            ),
        ),
    ),
    "person_zh": (
        _from_sets(CHINESE_NAMES),
        (
            (
                "{id} is flying to {city} for work on {day}.",
                "Where is {id} flying for work?",
                "{id}{day_zh}去{city_zh}出差。",
                "{id}去哪里出差？",
            ),
        ),
    ),
    "place": (
        _from_sets(PLACES),
        (
            (
                "We booked a guesthouse in {id} for {day}, {amount} euros a night.",
                "When is our guesthouse in {id} booked?",
                "我们订了{id}的民宿，{day_zh}入住，一晚{amount}元。",
                "{id}的民宿订在哪天？",
            ),
        ),
    ),
    "place_zh": (
        _from_sets(CHINESE_PLACES),
        (
            (
                "We booked a guesthouse in {id} for {day}, {amount} euros a night.",
                "When is our guesthouse in {id} booked?",
                "我们订了{id}的民宿，{day_zh}入住，一晚{amount}元。",
                "{id}的民宿订在哪天？",
            ),
        ),
    ),
}

#: Families whose identifiers belong to one language: English names and Dutch villages are
#: not asked about in Chinese-only cases, Chinese names and places not in English-only ones.
ONLY = {
    "person": {"en", "zh>en"},
    "place": {"en", "zh>en"},
    "person_zh": {"zh", "en>zh"},
    "place_zh": {"zh", "en>zh"},
}
#: Name families have few near-identical sets: fewer cases, each set used once.
NAME_CASES = 4


def _text(template: Template, lang: str, kind: str, ident: str, facts: dict[str, str]) -> str:
    index = {("en", "s"): 0, ("en", "q"): 1, ("zh", "s"): 2, ("zh", "q"): 3}[(lang, kind)]
    return template[index].format(id=ident, **facts)


def build(seed: int = SEED, *, quick: bool = False) -> Memories:
    """The set: every case's target and distractors, shuffled into one history."""
    rng = random.Random(seed)
    counts = QUICK if quick else FULL
    used: set[str] = set()
    cases: list[Case] = []
    for family, (make_ids, templates) in FAMILIES.items():
        for group, count in counts.items():
            if family in ONLY and group not in ONLY[family]:
                continue
            if family in ONLY and not quick:
                count = NAME_CASES if group in ("en", "zh") else 2
            for n in range(count):
                for _ in range(1000):
                    ident, near = make_ids(rng)
                    if ident not in used and not used & set(near):
                        break
                else:  # pragma: no cover - the families have far more ids than cases
                    raise RuntimeError(f"no fresh identifier for {family}")
                used.update((ident, *near))
                template = templates[n % len(templates)]
                asked, stored = group.split(">") if ">" in group else (group, group)
                distractors = (
                    _text(template, stored, "s", near[0], _facts(rng)),
                    _text(template, stored, "s", near[1], _facts(rng)),
                    _text(template, asked, "q", near[2], _facts(rng)),
                )
                cases.append(
                    Case(
                        group=group,
                        family=family,
                        identifier=ident,
                        near=near,
                        query=_text(template, asked, "q", ident, _facts(rng)),
                        target=_text(template, stored, "s", ident, _facts(rng)),
                        distractors=distractors,
                    )
                )
    texts = [(c.target, i) for i, c in enumerate(cases)]
    texts += [(d, -1) for c in cases for d in c.distractors]
    rng.shuffle(texts)
    target_of = [0] * len(cases)
    for at, (_, case) in enumerate(texts):
        if case >= 0:
            target_of[case] = at
    return Memories(tuple(t for t, _ in texts), tuple(cases), tuple(target_of))


__all__ = ["FAMILIES", "SEED", "Case", "Memories", "build"]
