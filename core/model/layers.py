"""Building blocks: scaled token embedding, sinusoidal positional encoding, FFN, residual blocks."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class TokenEmbedding(nn.Module):
    """Embedding lookup scaled by sqrt(d_model), so it is not drowned by the positional encoding."""

    def __init__(self, vocab_size: int, d_model: int, pad_id: int = 0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.scale = math.sqrt(d_model)
        nn.init.normal_(self.embedding.weight, std=d_model**-0.5)
        with torch.no_grad():
            self.embedding.weight[pad_id].zero_()

    @property
    def weight(self) -> Tensor:
        return self.embedding.weight

    def forward(self, ids: Tensor) -> Tensor:
        return self.embedding(ids) * self.scale


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE[p, 2j] = sin(p / 10000^(2j/d)), PE[p, 2j+1] = cos(same angle); shape (max_len, d_model)."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    angles = position * inv_freq
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return table.float()


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table; a non-persistent buffer, so checkpoints need not carry it."""

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        self.max_len = max_len
        self.register_buffer("table", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x: (B, T, d); positions offset .. offset+T-1 (offset > 0 when decoding one step at a time)."""
        end = offset + x.size(1)
        if end > self.max_len:
            raise ValueError(
                f"sequence reaches position {end}, beyond the positional encoding's max_len={self.max_len}"
            )
        return x + self.table[offset:end]


class FeedForward(nn.Module):
    """Position-wise FFN: Linear -> ReLU -> dropout -> Linear (the layout of torch's Transformer layers)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class Residual(nn.Module):
    """The residual connection around one sublayer, with its LayerNorm and dropout:
    post-LN (the paper)  x = norm(x + dropout(sublayer(x)))
    pre-LN               x = x + dropout(sublayer(norm(x)))
    A layer reads: out = sublayer(block.sublayer_input(x)); x = block.add(x, out)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def sublayer_input(self, x: Tensor) -> Tensor:
        """What the sublayer reads: norm(x) for pre-LN, x itself for post-LN."""
        return self.norm(x) if self.norm_first else x

    def add(self, x: Tensor, sublayer_output: Tensor) -> Tensor:
        x = x + self.dropout(sublayer_output)
        return x if self.norm_first else self.norm(x)
