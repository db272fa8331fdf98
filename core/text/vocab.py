"""The vocabulary: token <-> id, with the four special tokens first."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


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
