"""Attention masks. One convention everywhere: a boolean tensor where True = "may attend".

Masks broadcast against attention scores of shape (batch, heads, queries, keys).
torch.nn modules use the opposite convention (True = blocked); tests convert with `~`.
Disallowed scores are filled with -inf; a row with no allowed key gets all-zero
weights (see core.attention), never NaN.
"""

from __future__ import annotations

import torch
from torch import Tensor


def padding_mask(ids: Tensor, pad_id: int = 0) -> Tensor:
    """(B, T) token ids -> (B, 1, 1, T): True where the key is a real token."""
    return (ids != pad_id)[:, None, None, :]


def causal_mask(length: int, device: torch.device | None = None, offset: int = 0) -> Tensor:
    """(1, 1, length, offset + length): query i (at position offset + i) may see keys 0 .. offset + i."""
    query_pos = torch.arange(offset, offset + length, device=device)[:, None]
    key_pos = torch.arange(offset + length, device=device)[None, :]
    return (key_pos <= query_pos)[None, None]


def decoder_self_mask(tgt_ids: Tensor, pad_id: int = 0) -> Tensor:
    """Causal and key padding combined: (B, 1, T, T)."""
    return causal_mask(tgt_ids.size(1), tgt_ids.device) & padding_mask(tgt_ids, pad_id)
