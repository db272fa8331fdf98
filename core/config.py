"""Frozen configuration dataclasses, saved inside every checkpoint."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

ZH_TOKENIZERS = ("char", "jieba", "jieba_backoff")
ARCHS = ("transformer", "rnn")  # rnn: GRU encoder-decoder with Bahdanau attention (core/rnn.py)


@dataclass(frozen=True)
class ModelConfig:
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 256  # width of every token vector
    n_heads: int = 4  # attention heads; must divide d_model
    n_enc_layers: int = 3
    n_dec_layers: int = 3
    d_ff: int = 1024  # hidden width of the position-wise feed-forward network
    dropout: float = 0.1
    max_len: int = 128  # longest sequence the positional encoding covers
    norm_first: bool = False  # False = post-LN (the paper, the seeds); True = pre-LN
    tie_embeddings: bool = True  # decoder embedding doubles as the output projection
    arch: str = "transformer"  # or "rnn" (see core/rnn.py for what the fields mean there)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        """Raise ValueError naming the first absurd field (checkpoints from uploads pass here)."""
        limits = {
            "src_vocab_size": (5, 2_000_000),
            "tgt_vocab_size": (5, 2_000_000),
            "d_model": (4, 8192),
            "n_heads": (1, 128),
            "n_enc_layers": (1, 48),
            "n_dec_layers": (1, 48),
            "d_ff": (1, 65536),
            "max_len": (2, 16384),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"{name}={value!r} is out of range; expected an integer in [{low}, {high}]")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads={self.n_heads} does not divide d_model={self.d_model}")
        if not isinstance(self.dropout, (int, float)) or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout!r} must be a number in [0, 1)")
        if self.arch not in ARCHS:
            raise ValueError(f"arch={self.arch!r} is not known; expected one of {', '.join(ARCHS)}")
        if self.arch == "rnn" and (self.n_heads != 1 or self.d_model % 2):
            raise ValueError("arch='rnn' has one additive attention (n_heads=1) and needs an even d_model")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Build from a dict, rejecting unknown or missing keys with a clear message."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown model_config keys: {unknown}")
        try:
            config = cls(**data)
        except TypeError as err:
            raise ValueError(f"model_config is incomplete: {err}") from None
        config.validate()
        return config


@dataclass(frozen=True)
class TrainConfig:
    zh_tokenizer: str = "char"  # one of ZH_TOKENIZERS: Chinese target units
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
