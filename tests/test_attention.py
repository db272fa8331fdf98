"""Our attention against torch.nn.MultiheadAttention, and the explicit path against the fused one."""

import torch
from torch import nn

from core.model.attention import MultiHeadAttention, scaled_dot_product_attention
from core.model.masks import causal_mask, padding_mask
from tests.helpers.torch_reference import copy_into_torch

D, H = 16, 4


def make_pair(seed=0):
    torch.manual_seed(seed)
    ours = MultiHeadAttention(D, H).eval()
    for p in ours.parameters():
        nn.init.normal_(p, std=0.3)
    return ours, copy_into_torch(ours)


def test_self_attention_with_key_padding_equals_torch():
    ours, ref = make_pair()
    x = torch.randn(3, 7, D)
    ids = torch.tensor([[5] * 7, [5] * 4 + [0] * 3, [5] * 2 + [0] * 5])
    mask = padding_mask(ids)
    out, w = ours(x, x, mask, need_weights=True)
    ref_out, ref_w = ref(x, x, x, key_padding_mask=(ids == 0), average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=0)


def test_causal_self_attention_equals_torch():
    ours, ref = make_pair(1)
    x = torch.randn(2, 6, D)
    out, w = ours(x, x, causal_mask(6), need_weights=True)
    ref_out, ref_w = ref(x, x, x, attn_mask=~causal_mask(6)[0, 0], average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=0)


def test_cross_attention_with_padding_equals_torch():
    ours, ref = make_pair(2)
    queries, memory = torch.randn(2, 5, D), torch.randn(2, 8, D)
    ids = torch.tensor([[5] * 8, [5] * 3 + [0] * 5])
    out, w = ours(queries, memory, padding_mask(ids), need_weights=True)
    ref_out, ref_w = ref(queries, memory, memory, key_padding_mask=(ids == 0), average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=0)


def test_explicit_path_equals_fused_path():
    ours, _ = make_pair(3)
    x = torch.randn(2, 6, D)
    mask = causal_mask(6) & padding_mask(torch.tensor([[5] * 6, [5] * 4 + [0] * 2]))
    explicit, weights = ours(x, x, mask, need_weights=True)
    fused, none = ours(x, x, mask, need_weights=False)
    assert none is None and weights is not None
    torch.testing.assert_close(explicit, fused, atol=1e-5, rtol=0)


def test_weights_rows_sum_to_one_and_padded_keys_get_zero():
    ours, _ = make_pair(4)
    x = torch.randn(2, 6, D)
    ids = torch.tensor([[5] * 6, [5] * 3 + [0] * 3])
    _, w = ours(x, x, padding_mask(ids), need_weights=True)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, H, 6))
    assert torch.all(w[1, :, :, 3:] == 0)


def test_fully_masked_rows_give_zeros_not_nan_on_both_paths():
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
    mask = torch.ones(1, 1, 3, 5, dtype=torch.bool)
    mask[..., 1, :] = False  # query 1 may attend to nothing
    out, w = scaled_dot_product_attention(q, k, v, mask, need_weights=True)
    fused, _ = scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any() and not torch.isnan(fused).any()
    assert torch.all(w[..., 1, :] == 0) and torch.all(out[..., 1, :] == 0)
    torch.testing.assert_close(out, fused, atol=1e-6, rtol=0)
