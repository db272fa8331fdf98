"""Reading cmn.txt and splitting it by English sentence."""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Pair:
    en: str
    zh: str


@dataclass
class ReadReport:
    """What read_pairs kept and what it skipped, so nothing is dropped silently."""

    lines: int = 0
    pairs: int = 0
    malformed: int = 0
    malformed_examples: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.pairs} pairs from {self.lines} lines; {self.malformed} malformed lines skipped"


def read_pairs(path: str | Path) -> tuple[list[Pair], ReadReport]:
    """Lines `English<TAB>Chinese[<TAB>attribution]`; blank lines are ignored, other lines without
    exactly 2 or 3 fields, or with an empty side, are counted as malformed."""
    report = ReadReport()
    pairs: list[Pair] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            report.lines += 1
            parts = line.split("\t")
            if len(parts) not in (2, 3) or not parts[0].strip() or not parts[1].strip():
                report.malformed += 1
                if len(report.malformed_examples) < 5:
                    report.malformed_examples.append(f"line {number}: {line[:80]!r}")
                continue
            pairs.append(Pair(parts[0].strip(), parts[1].strip()))
    report.pairs = len(pairs)
    return pairs, report


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Split:
    train: list[Pair]
    dev: list[Pair]
    test: list[Pair]

    def sizes(self) -> dict[str, dict[str, int]]:
        return {
            name: {"pairs": len(pairs), "english_sentences": len({p.en for p in pairs})}
            for name, pairs in (("train", self.train), ("dev", self.dev), ("test", self.test))
        }


def split_by_english(pairs: Sequence[Pair], dev_size: int, test_size: int, seed: int = 42) -> Split:
    """Deterministic split: distinct English sentences are shuffled with `seed`; the first
    test_size go to test, the next dev_size to dev, the rest to train, each with all its
    translations. No English sentence appears in two splits."""
    by_english: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_english[pair.en].append(pair)
    sentences = sorted(by_english)
    if dev_size + test_size >= len(sentences):
        raise ValueError(
            f"dev_size + test_size = {dev_size + test_size} leaves no training data from {len(sentences)} English sentences"
        )
    random.Random(seed).shuffle(sentences)
    test = sentences[:test_size]
    dev = sentences[test_size : test_size + dev_size]
    train = sentences[test_size + dev_size :]

    def gather(group: list[str]) -> list[Pair]:
        return [p for en in group for p in by_english[en]]

    return Split(gather(train), gather(dev), gather(test))


def group_references(pairs: Sequence[Pair]) -> tuple[list[str], list[list[str]]]:
    """Distinct English sentences (first-seen order) and all their Chinese translations."""
    refs: dict[str, list[str]] = {}
    for pair in pairs:
        refs.setdefault(pair.en, []).append(pair.zh)
    return list(refs), list(refs.values())
