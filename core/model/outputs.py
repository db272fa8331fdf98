"""What every architecture returns: the encoder's output and, on request, its attention weights.
The weights are returned, never stored on modules, because one model object is shared by every
user of the app."""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor


@dataclass
class AttentionMaps:
    """Per-layer attention weights, each (B, H, Tq, Tk); rows = queries, columns = keys.
    An architecture without a kind of attention leaves its list empty."""

    encoder: list[Tensor] = field(default_factory=list)
    decoder: list[Tensor] = field(default_factory=list)  # masked self-attention
    cross: list[Tensor] = field(default_factory=list)


@dataclass
class Seq2SeqOutput:
    logits: Tensor  # (B, T, tgt_vocab)
    attention: AttentionMaps | None


@dataclass
class EncoderOutput:
    memory: Tensor  # (B, S, d)
    src_mask: Tensor  # (B, 1, 1, S), True = real source token
    attention: list[Tensor] | None  # per layer, when asked for

    def expand(self, count: int) -> EncoderOutput:
        """The same sentence repeated `count` times along the batch (beam search's hypotheses)."""
        return EncoderOutput(self.memory.expand(count, -1, -1), self.src_mask.expand(count, -1, -1, -1), None)
