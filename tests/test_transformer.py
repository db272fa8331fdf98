"""Whole-model properties: cache == full pass, causality, padding invariance, nothing stored."""

import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer


def model(seed=0, **overrides) -> Transformer:
    torch.manual_seed(seed)
    settings = dict(d_model=32, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=64, dropout=0.0, max_len=40)
    settings.update(overrides)
    return Transformer(ModelConfig(30, 40, **settings)).eval()


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 30, (2, 9), generator=g)
    src[1, 6:] = 0
    tgt = torch.randint(4, 40, (2, 7), generator=g)
    tgt[:, 0] = 2
    return src, tgt


@pytest.mark.parametrize("norm_first", [False, True])
def test_kv_cached_steps_equal_one_full_pass(norm_first):
    m = model(norm_first=norm_first)
    src, tgt = batch()
    full = m(src, tgt, return_attention=True)
    encoded = m.encode(src, return_attention=True)
    cache = m.new_cache()
    logits, self_rows, cross_rows = [], [], []
    for t in range(tgt.size(1)):
        step_logits, self_w, cross_w = m.decode(tgt[:, t : t + 1], encoded, True, cache, offset=t)
        logits.append(step_logits)
        self_rows.append(self_w)
        cross_rows.append(cross_w)
    torch.testing.assert_close(torch.cat(logits, 1), full.logits, atol=1e-5, rtol=0)
    for layer in range(2):
        torch.testing.assert_close(
            torch.cat([c[layer] for c in cross_rows], 2), full.attention.cross[layer], atol=1e-5, rtol=0
        )
        for t, rows in enumerate(self_rows):
            torch.testing.assert_close(
                rows[layer][:, :, 0], full.attention.decoder[layer][:, :, t, : t + 1], atol=1e-5, rtol=0
            )


def test_explicit_and_fused_paths_give_the_same_logits():
    m = model(1)
    src, tgt = batch(1)
    torch.testing.assert_close(m(src, tgt, return_attention=True).logits, m(src, tgt).logits, atol=1e-5, rtol=0)


def test_changing_later_target_tokens_leaves_earlier_outputs_unchanged():
    m = model(2)
    src, tgt = batch(2)
    changed = tgt.clone()
    changed[:, 4:] = torch.randint(4, 40, changed[:, 4:].shape)
    a, b = m(src, tgt, True), m(src, changed, True)
    torch.testing.assert_close(a.logits[:, :4], b.logits[:, :4], atol=1e-6, rtol=0)
    for la, lb in zip(a.attention.decoder, b.attention.decoder):
        torch.testing.assert_close(la[:, :, :4], lb[:, :, :4], atol=1e-6, rtol=0)


def test_padding_a_sentence_in_a_batch_changes_none_of_its_real_outputs():
    m = model(3)
    src = torch.tensor([[5, 6, 7, 3]])
    tgt = torch.tensor([[2, 8, 9]])
    alone = m(src, tgt, True)
    padded_src = torch.tensor([[5, 6, 7, 3, 0, 0, 0], [5, 6, 7, 8, 9, 10, 3]])
    padded_tgt = torch.tensor([[2, 8, 9, 0, 0], [2, 11, 12, 13, 14]])
    together = m(padded_src, padded_tgt, True)
    torch.testing.assert_close(together.logits[0, :3], alone.logits[0], atol=1e-5, rtol=0)
    torch.testing.assert_close(
        together.attention.encoder[0][0, :, :4, :4], alone.attention.encoder[0][0], atol=1e-5, rtol=0
    )
    torch.testing.assert_close(
        together.attention.cross[1][0, :, :3, :4], alone.attention.cross[1][0], atol=1e-5, rtol=0
    )


def test_attention_rows_sum_to_one_padded_keys_zero_and_decoder_upper_triangle_exactly_zero():
    m = model(4)
    src, tgt = batch(4)
    att = m(src, tgt, True).attention
    for kind in (att.encoder, att.decoder, att.cross):
        for w in kind:
            torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))
    for w in att.encoder + att.cross:
        assert torch.all(w[1, :, :, 6:] == 0)
    upper = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)
    for w in att.decoder:
        assert torch.all(w[..., upper] == 0)


def test_forward_stores_nothing_on_modules():
    m = model(5)
    before = {name: set(vars(mod)) for name, mod in m.named_modules()}
    src, tgt = batch(5)
    m(src, tgt, return_attention=True)
    after = {name: set(vars(mod)) for name, mod in m.named_modules()}
    assert before == after
    assert all(
        not isinstance(v, torch.Tensor) or k in ("_parameters", "_buffers")
        for mod in m.modules()
        for k, v in vars(mod).items()
    )


def test_tied_output_projection_shares_the_target_embedding():
    tied, untied = model(6), model(6, tie_embeddings=False)
    assert tied.generator is None and untied.generator is not None
    names = dict(tied.named_parameters())
    assert not any("generator" in n for n in names)
    src, tgt = batch(6)
    assert tied(src, tgt).logits.shape == (2, 7, 40)
    hidden = torch.randn(2, 3, 32)
    torch.testing.assert_close(tied.project(hidden), hidden @ tied.tgt_embed.weight.T)
    with torch.no_grad():  # one tensor: changing the embedding changes the output projection
        tied.tgt_embed.weight[7] += 1.0
    torch.testing.assert_close(tied.project(hidden)[..., 7], hidden @ tied.tgt_embed.weight[7])
    assert untied.generator.weight.data_ptr() != untied.tgt_embed.weight.data_ptr()
