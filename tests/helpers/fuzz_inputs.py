"""Deterministic hostile and ordinary text inputs for the translation fuzz tests.

`fuzz_inputs(n, seed)` first yields one input of every category (so even a small run covers them
all), then random picks, a quarter of them mixes of several categories. Same n and seed, same list.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

LONG_CHARS = 10_000

WORDS = (
    "i you he she we they tom mary like likes see read books tea coffee the a an cat dog river music apples "
    "is are was taller than where train station today raining stay at home my brother bought new car last week "
    "not don't can't it's beautiful quickly yesterday tomorrow school teacher doctor friend happy very"
).split()
SENTENCES = (
    "I like to read books.",
    "Where is the train station?",
    "Tom is taller than Mary.",
    "It is raining today, so I will stay at home.",
    "My brother bought a new car last week.",
    "Don't worry, I'll be there at 5 o'clock.",
    "She's the teacher's best friend.",
    "Can you help me?",
    "We went to the river yesterday and saw three cats.",
    "“Curly quotes” and ‘apostrophes’ aren’t a problem.",
)
SPACES = (" ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", "\x0b", "\x0c")
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
EMOJI = (
    "🙂",
    "🎉",
    "👍🏽",
    "👨‍👩‍👧‍👦",  # ZWJ family
    "🏳️‍🌈",  # ZWJ flag
    "🇨🇳",  # regional-indicator flags
    "🇺🇸",
    "🇬🇧",
    "1️⃣",  # keycap
    "❤️",
    "🧑🏿‍💻",
    "𝕳𝖊𝖑𝖑𝖔",  # mathematical letters (NFKC folds them to ASCII)
)
RTL = (
    "مرحبا بالعالم",
    "שלום עולם",
    "\u202eevil\u202c",  # right-to-left override, then pop
    "\u202dforced ltr\u202c",
    "\u2067isolate\u2069",
    "\u200fmark\u200e",
    "I like \u202etea\u202c.",
    "كتاب book ספר",
)
CONTROL = tuple(chr(c) for c in range(0x20)) + ("\x7f", "\x85", "\x9b", "\ud800", "\udfff", "\udbff\udc00", "\ufffd")
MIXED_ZH = (
    "I like 茶 and 咖啡.",
    "今天 weather 很好",
    "你好, Tom!",
    "我喜欢 to read 书。",
    "學生 student 学生",  # traditional and simplified
    "Ｆｕｌｌ－ｗｉｄｔｈ ｌｅｔｔｅｒｓ，ａｎｄ　ｓｐａｃｅｓ",
)
HTML = (
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<b>bold</b> <i>tea</i>",
    "<iframe src='javascript:alert(1)'></iframe>",
    "</div></span><style>body{display:none}</style>",
    "&lt;script&gt; &amp; &#x3C; &nbsp;",
    "{{7*7}} ${7*7} <%= 7*7 %>",
    "'; DROP TABLE users; --",
    '"><svg/onload=alert(1)>',
)
NUMBERS = ("12 345", "3.14159", "-0", "1e308", "0x1F", "١٢٣", "½ ¾", "Ⅻ", "１２３", "1,000,000", "+86 138 0013 8000")
URLS = (
    "https://example.com/path?q=1&x=<y>#frag",
    "http://例子.测试/路径",
    "www.test.org",
    "ftp://user:pass@host:21/file.txt",
    "file:///etc/passwd",
    "data:text/html,<script>alert(1)</script>",
)
EMAILS = ("john.doe+tag@example.co.uk", "a@b", "user@[127.0.0.1]", '"odd name"@example.com')
MARKDOWN = (
    "# Title\n## Subtitle",
    "**bold** _italic_ `code` ~~strike~~",
    "[link](http://x.invalid) ![img](x.png)",
    "- item\n- item\n> quote",
    "```python\nprint('hi')\n```",
    "$x^2$ and $$\\frac{a}{b}$$",
    ":material/home: :red[red text] :smile:",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "\\*escaped\\* <br> ---",
)
COMBINING = (
    "e\u0301 cafe\u0301",
    "Z\u0336\u0327a\u0334\u031bl\u0338g\u0335o\u0337 text",
    "n\u0303" * 20,
    "a" + "\u0300" * 200,
    "ﬁne ﬂower",  # ligatures
    "한국어 \u1100\u1161",
    "Å Å",  # precomposed vs combining ring
)


@dataclass(frozen=True)
class FuzzInput:
    category: str
    text: str


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def _english(rng: random.Random) -> str:
    return rng.choice(SENTENCES) if rng.random() < 0.6 else _words(rng, rng.randint(1, 12)).capitalize() + "."


def _whitespace(rng: random.Random) -> str:
    pool = SPACES + ZERO_WIDTH
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))


def _long_text(rng: random.Random) -> str:
    text = ""
    while len(text) < LONG_CHARS:
        text += _english(rng) + " "
    return text[:LONG_CHARS]


def _long_word(rng: random.Random) -> str:
    length = rng.choice((100, 1000, 5000, LONG_CHARS))
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def _emoji(rng: random.Random) -> str:
    parts = [rng.choice(EMOJI) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.5:
        parts.insert(rng.randrange(len(parts) + 1), _english(rng))
    return "".join(parts) if rng.random() < 0.5 else " ".join(parts)


def _control(rng: random.Random) -> str:
    words = _english(rng).split(" ")
    for _ in range(rng.randint(1, 10)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(CONTROL))
    return rng.choice(("", " ")).join(words)


def _punctuation(rng: random.Random) -> str:
    pool = string.punctuation + "…—–“”‘’«»¿¡。，！？、：；「」《》·•※"
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 60)))


def _repeated(rng: random.Random) -> str:
    unit = rng.choice(("the ", "very ", "tea. ", "I like tea. ", "! ", "buffalo ", "ha"))
    return unit * rng.randint(2, 400)


def _pick(pool: tuple[str, ...]) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        text = rng.choice(pool)
        return text if rng.random() < 0.5 else f"{_english(rng)} {text}"

    return make


CATEGORIES: dict[str, Callable[[random.Random], str]] = {
    "empty": lambda rng: "",
    "whitespace": _whitespace,
    "english": _english,
    "long 10k chars": _long_text,
    "long word": _long_word,
    "emoji": _emoji,
    "rtl": _pick(RTL),
    "control": _control,
    "mixed zh/en": _pick(MIXED_ZH),
    "html": _pick(HTML),
    "punctuation": _punctuation,
    "numbers": _pick(NUMBERS),
    "url": _pick(URLS),
    "email": _pick(EMAILS),
    "markdown": _pick(MARKDOWN),
    "repeated": _repeated,
    "combining": _pick(COMBINING),
}


def _mix(rng: random.Random) -> str:
    names = rng.sample(sorted(CATEGORIES), rng.randint(2, 4))
    parts = [CATEGORIES[name](rng) for name in names]
    return rng.choice(("", " ", "\n", "\u200b")).join(parts)[: 2 * LONG_CHARS]


def fuzz_inputs(n: int, seed: int = 20240601) -> list[FuzzInput]:
    """n inputs: every category once (the canonical 10,000-char one included), then seeded random picks."""
    rng = random.Random(seed)
    names = sorted(CATEGORIES)
    out = [FuzzInput(name, CATEGORIES[name](rng)) for name in names]
    out.append(FuzzInput("mix", _mix(rng)))
    out.append(FuzzInput("control", "\ud800"))  # a lone surrogate alone: a classic crash when encoding
    while len(out) < n:
        if rng.random() < 0.25:
            out.append(FuzzInput("mix", _mix(rng)))
        else:
            name = rng.choice(names)
            out.append(FuzzInput(name, CATEGORIES[name](rng)))
    return out[:n]
