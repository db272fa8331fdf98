"""Scaled dot-product attention (explicit and fused paths) and multi-head attention with a KV cache."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0, need_weights: bool = False
) -> tuple[Tensor, Tensor | None]:
    """softmax(q k^T / sqrt(d_k)) v for (B, H, T, d_k) tensors; mask is boolean, True = may attend.

    need_weights=False takes torch's fused kernel (fast, no weights); True computes the softmax
    explicitly and returns the weights (before dropout). Both give the same output.
    """
    if not need_weights:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p), None
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        # A query with no allowed key: softmax of all -inf is NaN; such rows attend to nothing.
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return F.dropout(weights, dropout_p) @ v, weights


def _packed_linear(x: Tensor, *layers: nn.Linear) -> tuple[Tensor, ...]:
    """Several projections of the same input as one matrix product, split afterwards: one large
    product is much faster on CPU than several small ones (as torch's in_proj does). The weights
    stay separate parameters, so checkpoints keep their q_proj / k_proj / v_proj names."""
    weight = torch.cat([layer.weight for layer in layers])
    bias = torch.cat([layer.bias for layer in layers])
    return F.linear(x, weight, bias).chunk(len(layers), dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention; used as encoder self, decoder masked self and cross attention."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)

    def scores(self, query: Tensor, key_value: Tensor) -> Tensor:
        """Unscaled Q Kᵀ per head, (B, H, Tq, Tk): the first stage of attention, for the mask lab."""
        k, _ = self.project_kv(key_value)
        return self._split_heads(self.q_proj(query)) @ k.transpose(-2, -1)

    def project_kv(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of x as (B, H, T, d_k); cached by the decoder between steps."""
        return self._split_heads(self.k_proj(x)), self._split_heads(self.v_proj(x))

    def forward(
        self,
        query: Tensor,
        key_value: Tensor | None = None,
        mask: Tensor | None = None,
        need_weights: bool = False,
        kv: tuple[Tensor, Tensor] | None = None,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """query (B, Tq, d); keys/values from key_value (B, Tk, d) or precomputed kv.
        head_mask (H,) multiplies each head's context vector before the output projection
        (0 = the head is ablated).

        Returns the output (B, Tq, d) and, if need_weights, the weights (B, H, Tq, Tk).
        """
        if kv is None and key_value is query:  # self-attention: all three projections in one product
            q, k, v = (self._split_heads(t) for t in _packed_linear(query, self.q_proj, self.k_proj, self.v_proj))
            kv = (k, v)
        else:
            if kv is None:
                if key_value is None:
                    raise ValueError("give key_value or precomputed kv")
                k, v = _packed_linear(key_value, self.k_proj, self.v_proj)
                kv = (self._split_heads(k), self._split_heads(v))
            q = self._split_heads(self.q_proj(query))
        dropout_p = self.dropout if self.training else 0.0
        out, weights = scaled_dot_product_attention(q, kv[0], kv[1], mask, dropout_p, need_weights)
        if head_mask is not None:
            out = out * head_mask[:, None, None]
        batch, _, length, _ = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, -1)), weights


class AdditiveAttention(nn.Module):
    """Bahdanau attention: score(s, h) = vᵀ tanh(W_s s + W_h h), softmax over the real source tokens."""

    def __init__(self, query_dim: int, key_dim: int, attention_dim: int):
        super().__init__()
        self.w_s = nn.Linear(query_dim, attention_dim, bias=False)
        self.w_h = nn.Linear(key_dim, attention_dim, bias=False)
        self.v = nn.Linear(attention_dim, 1, bias=False)

    def project_keys(self, memory: Tensor) -> Tensor:
        """W_h h for every source position, (B, S, A): computed once per sentence."""
        return self.w_h(memory)

    def forward(self, state: Tensor, keys: Tensor, memory: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """state (B, Dq), keys = project_keys(memory) (B, S, A), memory (B, S, Dk), mask (B, S) True = real.

        Returns the context (B, Dk) and the weights (B, S); padded positions get exactly 0."""
        scores = self.v(torch.tanh(self.w_s(state)[:, None, :] + keys)).squeeze(-1)
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)  # an empty source: no NaN
        return (weights[:, None, :] @ memory).squeeze(1), weights
