"""How well cross-attention aligns: each Chinese word of the model's output is linked to the English
word its attention weighs most, and the links are scored against a reference alignment built from
the CC-CEDICT lexicon (sure links only: a Chinese word and an English word of the sentence that
translate each other). With sure links only, AER = 1 − 2·|A∩S| / (|A| + |S|)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.explain.views import word_groups
from core.text.lexicon import translates
from core.text.vocab import SPECIALS

_ENGLISH_WORD = re.compile(r"^[^\W_]+(?:'[^\W_]+)*$")


@dataclass
class AlignmentCounts:
    """Summed over sentences; only Chinese words with at least one reference link are scored."""

    predicted: int = 0  # |A|: one link per scored Chinese word
    sure: int = 0  # |S|
    correct: int = 0  # |A ∩ S|

    def add(self, other: AlignmentCounts) -> None:
        self.predicted += other.predicted
        self.sure += other.sure
        self.correct += other.correct

    def scores(self) -> dict[str, float | int | None]:
        total = self.predicted + self.sure
        return {
            "precision": round(self.correct / self.predicted, 4) if self.predicted else None,
            "recall": round(self.correct / self.sure, 4) if self.sure else None,
            "aer": round(1 - 2 * self.correct / total, 4) if total else None,
            "words": self.predicted,
        }


@dataclass
class SentenceLinks:
    """One sentence's reference: the Chinese words (with their output positions) and, per word,
    the English source positions it translates."""

    word_rows: list[list[int]]  # per scored Chinese word, the output positions of its characters
    sure: list[set[int]]  # per scored Chinese word, the source positions it links to
    source_words: list[int]  # source positions that are words (not <eos>, not punctuation)


def reference_links(
    output_tokens: Sequence[str],
    source_tokens: Sequence[str],
    translates_to: Callable[[str, str], bool] = translates,
) -> SentenceLinks:
    """output_tokens: the generated tokens (characters), without <bos>; source_tokens as the encoder saw them."""
    source_words = [i for i, t in enumerate(source_tokens) if t not in SPECIALS and _ENGLISH_WORD.match(t)]
    rows, sure = [], []
    for word, positions in word_groups(list(output_tokens)):
        if word in SPECIALS:
            continue
        links = {i for i in source_words if translates_to(word, source_tokens[i])}
        if links:
            rows.append(positions)
            sure.append(links)
    return SentenceLinks(rows, sure, source_words)


def score_attention(links: SentenceLinks, attention: np.ndarray) -> AlignmentCounts:
    """attention (output positions, source positions): the row of position t is the step that
    produced output token t. A word's attention is the mean of its characters' rows; its link goes
    to the English word with the largest weight."""
    counts = AlignmentCounts()
    if not links.source_words:
        return counts
    words = np.array(links.source_words)
    for rows, sure in zip(links.word_rows, links.sure):
        weights = attention[rows].mean(axis=0)[words]
        predicted = int(words[int(np.argmax(weights))])
        counts.predicted += 1
        counts.sure += len(sure)
        counts.correct += predicted in sure
    return counts
