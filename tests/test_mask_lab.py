"""The mask lab: a really padded batch, its masks, and a score pipeline equal to the model's own weights."""

import numpy as np
import pytest
import torch

from core.explain import mask_lab
from core.model.transformer import Transformer
from core.text.vocab import PAD
from tests.helpers.fixtures import tiny_config

SENTENCES = ["I like tea.", "They see the river."]


@pytest.fixture(scope="module")
def batch(trained_tiny):
    model, pipeline = trained_tiny
    return mask_lab.build_batch(model, pipeline, SENTENCES)


def test_the_shorter_sentence_is_padded_in_source_and_target(batch):
    assert batch.src_tokens[0] == ["i", "like", "tea", ".", "<eos>", PAD]
    assert batch.src_tokens[1] == ["they", "see", "the", "river", ".", "<eos>"]
    assert batch.tgt_tokens[0][0] == "<bos>" and batch.tgt_tokens[0][-1] == PAD and batch.has_padding
    assert batch.padding_rows().tolist() == [[True] * 5 + [False], [True] * 6]


def test_masks_block_padding_and_the_future(batch):
    masks = batch.masks(0)
    source_pad = [t == PAD for t in batch.src_tokens[0]]
    target_pad = [t == PAD for t in batch.tgt_tokens[0]]
    assert not masks["encoder"][:, source_pad].any() and masks["encoder"][:, ~np.array(source_pad)].all()
    assert not masks["cross"][:, source_pad].any() and masks["cross"].shape == (len(target_pad), len(source_pad))
    causal = masks["causal"]
    assert (causal == np.tril(np.ones_like(causal))).all()
    assert (masks["decoder"] == (causal & ~np.array(target_pad)[None, :])).all()
    for name in mask_lab.MASK_NAMES:
        rows, cols = batch.axes(name, 0)
        assert masks[name].shape == (len(rows), len(cols))
    assert batch.masks(1)["encoder"].all()  # the longer sentence has no padding


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_the_pipeline_ends_in_exactly_the_models_attention_weights(trained_tiny, kind, norm_first):
    trained, pipeline = trained_tiny
    torch.manual_seed(0)
    model = trained if not norm_first else Transformer(tiny_config(pipeline, norm_first=True)).eval()
    batch = mask_lab.build_batch(model, pipeline, SENTENCES)
    maps = model(batch.src, batch.tgt, return_attention=True).attention
    for layer in range(2):
        for row in range(2):
            stages = mask_lab.score_pipeline(model, batch, kind, layer, 1, row)
            expected = getattr(maps, kind)[layer][row, 1].detach().numpy()
            assert np.allclose(stages.weights, expected, atol=1e-5)
            assert np.allclose(stages.scaled, stages.raw / np.sqrt(model.config.head_dim))
            assert np.isneginf(stages.masked[~stages.mask]).all()
            assert np.array_equal(stages.masked[stages.mask], stages.scaled[stages.mask])


def test_wrong_fills_leak_attention_onto_blocked_keys(trained_tiny, batch):
    model, _ = trained_tiny
    stages = mask_lab.score_pipeline(model, batch, "decoder", 0, 0, 0)
    assert stages.leaked_mass(stages.weights).max() == 0.0
    for label, weights in stages.wrong.items():
        assert np.allclose(weights.sum(axis=1), 1.0)
        assert stages.leaked_mass(weights).max() > 0.05, label  # the first query "sees" the future
    encoder = mask_lab.score_pipeline(model, batch, "encoder", 0, 0, 0)
    assert encoder.leaked_mass(encoder.wrong["0"])[0] > 0 and encoder.leaked_mass(encoder.weights).max() == 0
    leaks = stages.max_leaks()  # what the page prints: the correct fill first, then each wrong one
    assert list(leaks) == ["−∞ (correct)", *stages.wrong] and leaks["−∞ (correct)"] == 0.0
    assert all(leaks[label] == stages.leaked_mass(w).max() for label, w in stages.wrong.items())


def test_out_of_range_choices_are_refused(trained_tiny, batch):
    model, _ = trained_tiny
    with pytest.raises(ValueError, match="unknown attention kind"):
        mask_lab.score_pipeline(model, batch, "sideways", 0, 0, 0)
    with pytest.raises(ValueError, match="out of range"):
        mask_lab.score_pipeline(model, batch, "cross", 5, 0, 0)


def test_partner_sentence_has_a_different_length():
    assert mask_lab.partner_sentence(4) == mask_lab.LONG_PARTNER
    assert mask_lab.partner_sentence(30) == mask_lab.SHORT_PARTNER
