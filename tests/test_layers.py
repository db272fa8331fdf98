"""Our encoder/decoder layers against torch's Transformer layers, and the positional encoding."""

import pytest
import torch
from torch import nn

from core.model.config import ModelConfig
from core.model.layers import PositionalEncoding, sinusoidal_table
from core.model.masks import causal_mask, padding_mask
from core.model.transformer import DecoderLayer, EncoderLayer
from tests.helpers.torch_reference import copy_into_torch

D, H, FF = 16, 4, 32


def config(norm_first=False) -> ModelConfig:
    return ModelConfig(10, 10, d_model=D, n_heads=H, d_ff=FF, dropout=0.0, norm_first=norm_first)


def copy_mha(ours, theirs: nn.MultiheadAttention) -> None:
    theirs.load_state_dict(copy_into_torch(ours).state_dict())


def copy_common(ours, ref) -> None:
    with torch.no_grad():
        ref.linear1.load_state_dict(ours.ffn.linear1.state_dict())
        ref.linear2.load_state_dict(ours.ffn.linear2.state_dict())


def randomize(module: nn.Module) -> None:
    for p in module.parameters():
        nn.init.normal_(p, std=0.3)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch(norm_first):
    torch.manual_seed(0)
    ours = EncoderLayer(config(norm_first)).eval()
    randomize(ours)
    ref = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    copy_mha(ours.self_attn, ref.self_attn)
    copy_common(ours, ref)
    ref.norm1.load_state_dict(ours.attn_block.norm.state_dict())
    ref.norm2.load_state_dict(ours.ffn_block.norm.state_dict())
    x = torch.randn(2, 6, D)
    ids = torch.tensor([[5] * 6, [5] * 4 + [0] * 2])
    out, _ = ours(x, padding_mask(ids))
    ref_out = ref(x, src_key_padding_mask=(ids == 0))
    # torch's fast path leaves padded rows as zeros; compare the real positions
    real = ids != 0
    torch.testing.assert_close(out[real], ref_out[real], atol=1e-5, rtol=0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch(norm_first):
    torch.manual_seed(1)
    ours = DecoderLayer(config(norm_first)).eval()
    randomize(ours)
    ref = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    copy_mha(ours.self_attn, ref.self_attn)
    copy_mha(ours.cross_attn, ref.multihead_attn)
    copy_common(ours, ref)
    ref.norm1.load_state_dict(ours.self_block.norm.state_dict())
    ref.norm2.load_state_dict(ours.cross_block.norm.state_dict())
    ref.norm3.load_state_dict(ours.ffn_block.norm.state_dict())
    x, memory = torch.randn(2, 5, D), torch.randn(2, 7, D)
    tgt_ids = torch.tensor([[5] * 5, [5] * 3 + [0] * 2])
    src_ids = torch.tensor([[5] * 7, [5] * 4 + [0] * 3])
    out, _, _ = ours(x, memory, causal_mask(5) & padding_mask(tgt_ids), padding_mask(src_ids))
    ref_out = ref(
        x,
        memory,
        tgt_mask=~causal_mask(5)[0, 0],
        tgt_key_padding_mask=(tgt_ids == 0),
        memory_key_padding_mask=(src_ids == 0),
    )
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)


def test_positional_encoding_values_match_the_formula():
    table = sinusoidal_table(50, 8)
    p, j = 7, 2
    angle = p / 10000 ** (2 * j / 8)
    assert table[p, 2 * j].item() == pytest.approx(torch.sin(torch.tensor(angle)).item(), abs=1e-6)
    assert table[p, 2 * j + 1].item() == pytest.approx(torch.cos(torch.tensor(angle)).item(), abs=1e-6)


def test_positional_encoding_is_unique_per_position_and_deterministic():
    table = sinusoidal_table(512, 64)
    distances = torch.cdist(table, table) + torch.eye(512) * 1e9
    assert distances.min() > 1e-3
    assert torch.equal(table, sinusoidal_table(512, 64))


def test_positional_encoding_is_independent_of_sentence_length():
    pe = PositionalEncoding(16, 100)
    short, long = pe(torch.zeros(1, 5, 16)), pe(torch.zeros(1, 40, 16))
    assert torch.equal(short[0], long[0, :5])


def test_positional_dot_product_depends_only_on_distance():
    table = sinusoidal_table(200, 64).double()
    for k in (1, 5, 17):
        dots = (table[:-k] * table[k:]).sum(-1)
        assert dots.max() - dots.min() < 1e-4, k


def test_positional_encoding_beyond_max_len_is_a_clear_error():
    pe = PositionalEncoding(16, 10)
    with pytest.raises(ValueError, match="max_len=10"):
        pe(torch.zeros(1, 11, 16))
    pe(torch.zeros(1, 1, 16), offset=9)  # the last position is fine
