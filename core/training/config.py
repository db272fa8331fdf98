"""The training run's configuration: a frozen dataclass recorded in every checkpoint's card."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class TrainConfig:
    zh_tokenizer: str = "char"  # one of core.text.tokenize.ZH_TOKENIZERS: Chinese target units
    min_freq: int = 2  # tokens seen fewer times become <unk> (or characters, with jieba_backoff)
    max_tokens: int = 3000  # padded tokens (source + target) per length-bucketed batch
    epochs: int = 12  # the cosine schedule spans all epochs
    max_minutes: float = 0.0  # stop after this wall time (0 = no limit); the best epoch is kept
    lr: float = 1e-3  # peak learning rate after warmup
    warmup_steps: int = 400
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    seed: int = 42
    dev_size: int = 500  # English sentences held out for dev
    test_size: int = 1000  # English sentences held out for test
    max_src_len: int = 60  # training pairs longer than this (in tokens) are skipped and counted
    max_tgt_len: int = 80

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
