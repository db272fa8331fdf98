"""Tokenizers for English and Chinese, and turning Chinese tokens back into text.

Decisions (measured in the README):
- English: lower-cased words; punctuation is its own token; a contraction stays
  one token ("don't", "i'm"), so the same word always gives the same token.
- Chinese: characters (Latin/digit runs kept whole), jieba words, or jieba words
  with character back-off for words outside the vocabulary (no target <unk>).
- Traditional characters are normalised to Simplified before tokenizing the
  training targets (OpenCC t2s); in cmn.txt that changes 11 of 28,106 lines.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from core.text.vocab import SPECIALS

ZH_TOKENIZERS = ("char", "jieba", "jieba_backoff")  # Chinese target units a checkpoint may use

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"'})
# A word: letters/digits, optionally followed by apostrophe parts (don't, o'clock);
# anything else that is not space is one punctuation token.
_EN_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|\S")
_ZH_CHAR_TOKEN = re.compile(r"[A-Za-z0-9]+|\S")
_LATIN_END = re.compile(r"[A-Za-z0-9]$")
_LATIN_START = re.compile(r"^[A-Za-z0-9]")


def strip_control(text: str) -> str:
    """Drop control and format characters (zero-width, bidi marks) that would become invisible tokens."""
    return "".join(c for c in text if unicodedata.category(c)[0] != "C" or c.isspace())


def normalize_en(text: str) -> str:
    """NFKC (full-width letters to ASCII), unify quotes and apostrophes, no control characters."""
    return strip_control(unicodedata.normalize("NFKC", text).translate(_APOSTROPHES))


def tokenize_en(text: str) -> list[str]:
    """Lower-cased English word and punctuation tokens."""
    return _EN_TOKEN.findall(normalize_en(text).lower())


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    return _t2s().convert(text)


def segment_words(text: str) -> list[str]:
    """jieba words (dictionary only, no HMM guesses, so segmentation is stable)."""
    return [w for w in _jieba().lcut(strip_control(text), HMM=False) if w.strip()]


def tokenize_zh(text: str, mode: str = "char", known_words: set[str] | frozenset[str] | None = None) -> list[str]:
    """Chinese tokens: 'char', 'jieba', or 'jieba_backoff' (words not in known_words become characters)."""
    if mode == "char":
        return _ZH_CHAR_TOKEN.findall(strip_control(text))
    words = segment_words(text)
    if mode == "jieba":
        return words
    if mode == "jieba_backoff":
        known = known_words or frozenset()
        out: list[str] = []
        for word in words:
            out.extend([word] if word in known else _ZH_CHAR_TOKEN.findall(word))
        return out
    raise ValueError(f"unknown Chinese tokenizer {mode!r}; expected char, jieba or jieba_backoff")


def detokenize_zh(tokens: Iterable[str]) -> str:
    """Join Chinese tokens; a space only between two Latin/digit tokens ("iPhone 5")."""
    out = ""
    for tok in tokens:
        if out and _LATIN_END.search(out) and _LATIN_START.match(tok):
            out += " "
        out += tok
    return out


def output_text(tokens: Iterable[str]) -> str:
    """A translation as shown to people: detokenized, without <bos>/<eos>/<pad>/<unk>."""
    return detokenize_zh(t for t in tokens if t not in SPECIALS)
