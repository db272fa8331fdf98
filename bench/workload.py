"""What the benchmarks run on: the shipped (or a given) checkpoint and sentences it never trained on."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from core.io.checkpoint import LoadedModel
from core.text.batches import iterate_batches
from core.text.data import Split, group_references, read_pairs, split_by_english
from core.training.config import TrainConfig
from core.training.data import card_split, encode_pairs


@dataclass
class Workload:
    loaded: LoadedModel
    split: Split

    def held_out(self, count: int) -> list[str]:
        """The first `count` distinct English sentences of the checkpoint's own test split."""
        seen: dict[str, None] = {}
        for pair in self.split.test:
            seen.setdefault(pair.en)
        return list(seen)[:count]

    def dev(self, count: int) -> tuple[list[str], list[list[str]]]:
        """The first `count` English sentences of the dev split with all their references."""
        sources, references = group_references(self.split.dev)
        return sources[:count], references[:count]

    def training_batches(self, count: int, max_tokens: int) -> list[tuple[Tensor, Tensor]]:
        """`count` length-bucketed (src, tgt) batches of the training split, as core.train builds them."""
        examples, _ = encode_pairs(self.split.train, self.loaded.pipeline, TrainConfig())
        batches = []
        for batch in iterate_batches(examples, max_tokens, random.Random(0)):
            batches.append(batch)
            if len(batches) == count:
                break
        return batches


def load_workload(loaded: LoadedModel, data: Path) -> Workload:
    """Recreate the checkpoint's split from its card (same pairs, sizes and seed as its training run);
    a checkpoint without a recorded split gets core.train's default one."""
    if not data.is_file():
        raise SystemExit(f"no data file at {data}: pass --data PATH (cmn.txt format)")
    pairs, _ = read_pairs(data)
    try:
        split = card_split(pairs, loaded.model_card)
    except ValueError:
        defaults = TrainConfig()
        split = split_by_english(pairs, defaults.dev_size, defaults.test_size, defaults.seed)
    return Workload(loaded, split)
