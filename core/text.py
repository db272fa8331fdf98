"""Tokenizers for English and Chinese, and the Vocab that maps tokens to ids.

Decisions (measured in the README):
- English: lower-cased words; punctuation is its own token; a contraction stays
  one token ("don't", "i'm"), so the same word always gives the same token.
- Chinese: characters (Latin/digit runs kept whole), jieba words, or jieba words
  with character back-off for words outside the vocabulary (no target <unk>).
- Traditional characters are normalised to Simplified before tokenizing the
  training targets (OpenCC t2s); in cmn.txt that changes 11 of 28,106 lines.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from core.config import ZH_TOKENIZERS

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3

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


class Vocab:
    """Token <-> id map with <pad>=0, <unk>=1, <bos>=2, <eos>=3."""

    def __init__(self, tokens: list[str]):
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise ValueError("a vocab must be a list of strings")
        if tuple(tokens[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocab must start with {list(SPECIALS)}")
        if len(set(tokens)) != len(tokens):
            raise ValueError("a vocab must not repeat tokens")
        self.itos: list[str] = tokens
        self.stoi: dict[str, int] = {tok: i for i, tok in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_freq: int = 1) -> Vocab:
        """Tokens seen at least min_freq times, most frequent first (ties alphabetical)."""
        counts = Counter(tok for sent in sentences for tok in sent)
        kept = sorted(
            (t for t, c in counts.items() if c >= min_freq and t not in SPECIALS), key=lambda t: (-counts[t], t)
        )
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, UNK_ID) for t in tokens]

    def decode(self, ids: Iterable[int], strip_specials: bool = True) -> list[str]:
        tokens = [self.itos[i] if 0 <= i < len(self.itos) else UNK for i in ids]
        return [t for t in tokens if t not in (PAD, BOS, EOS)] if strip_specials else tokens

    def to_json(self) -> str:
        return json.dumps(self.itos, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocab:
        return cls(json.loads(text))


class TextPipeline:
    """Both sides' tokenization and vocabularies: what a checkpoint needs to read and write text."""

    def __init__(self, src_vocab: Vocab, tgt_vocab: Vocab, zh_tokenizer: str = "char"):
        if zh_tokenizer not in ZH_TOKENIZERS:
            raise ValueError(f"unknown Chinese tokenizer {zh_tokenizer!r}")
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        self.zh_tokenizer = zh_tokenizer
        self._known_words = frozenset(t for t in tgt_vocab.itos if len(t) > 1)

    def source_tokens(self, text: str) -> list[str]:
        return tokenize_en(text)

    def target_tokens(self, text: str) -> list[str]:
        return tokenize_zh(to_simplified(text), self.zh_tokenizer, self._known_words)

    def source_ids(self, tokens: Sequence[str]) -> list[int]:
        """Encoder input: token ids then <eos>."""
        return self.src_vocab.encode(tokens) + [EOS_ID]

    def target_ids(self, tokens: Sequence[str]) -> list[int]:
        """Decoder sequence: <bos>, token ids, <eos>."""
        return [BOS_ID] + self.tgt_vocab.encode(tokens) + [EOS_ID]

    def settings(self) -> dict[str, str]:
        return {"src": "en_words", "tgt": self.zh_tokenizer, "tgt_normalize": "t2s"}
