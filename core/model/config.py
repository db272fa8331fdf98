"""The model's configuration: a frozen dataclass saved inside every checkpoint."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


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
    arch: str = "transformer"  # a name in core.model.registry.ARCHITECTURES ("rnn": GRU + Bahdanau)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        """Raise ValueError naming the first absurd field (checkpoints from uploads pass here).
        What one architecture needs beyond this is checked by core.model.registry.check_config."""
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
