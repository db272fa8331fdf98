"""Which model class a config builds: the one place that maps `ModelConfig.arch` to a module."""

from __future__ import annotations

from core.config import ModelConfig
from core.rnn import BahdanauSeq2Seq
from core.transformer import Transformer

Seq2Seq = Transformer | BahdanauSeq2Seq  # both speak encode / decode / new_cache / forward
ARCH_NAMES = {"transformer": "Transformer", "rnn": "GRU + Bahdanau attention"}


def build_model(config: ModelConfig) -> Seq2Seq:
    return BahdanauSeq2Seq(config) if config.arch == "rnn" else Transformer(config)
