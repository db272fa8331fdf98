"""The positional-encoding lab: the table and its properties, embedding parts, and the ablation."""

import numpy as np
import pytest
import torch

from core.explain import positional
from core.inference.trace import trace
from core.model.intervention import POSITION_MODES, Intervention, shuffled_positions
from tests.helpers.trace_schema import validate_trace


def test_table_is_the_one_the_model_adds(trained_tiny):
    model, _ = trained_tiny
    table = positional.pe_table(model.config.d_model, 20)
    assert np.allclose(table, model.positional.table[:20].numpy())


def test_similarity_is_constant_along_diagonals_and_largest_on_the_diagonal():
    table = positional.pe_table(64, 50)
    sim = positional.similarity(table)
    assert positional.diagonal_spread(sim) < 1e-4 * sim.max()
    assert np.allclose(np.diag(sim), 32.0, atol=1e-4)  # |PE_p|² = d/2
    assert (sim.argmax(axis=1) == np.arange(50)).all()
    distances, values = positional.distance_profile(table)
    assert distances == list(range(50)) and np.isclose(values[0], 32.0, atol=1e-4) and max(values[1:]) < values[0]


def test_wavelengths_grow_from_2pi_to_about_10000_times_2pi():
    waves = positional.wavelengths(256)
    assert np.isclose(waves[0], 2 * np.pi) and waves[0] == waves[1]
    assert (np.diff(waves[::2]) > 0).all() and 2 * np.pi * 10000 * 0.9 < waves[-1] < 2 * np.pi * 10000


def test_embedding_parts_add_up_to_the_encoder_input(trained_tiny):
    model, pipeline = trained_tiny
    ids = pipeline.source_ids(pipeline.source_tokens("Tom likes tea."))
    tokens = pipeline.src_vocab.decode(ids, strip_specials=False)
    parts = positional.embedding_parts(model, ids, tokens)
    expected = model.embed_source(torch.tensor([ids]))[0].detach().double().numpy()
    assert np.allclose(parts.total, expected, atol=1e-5)
    assert np.allclose(parts.scaled, parts.raw * model.config.d_model**0.5)
    norms = parts.norms()
    assert set(norms) == {"embedding (raw)", "embedding × √d_model", "positional encoding", "sum (encoder input)"}
    assert all(len(v) == len(tokens) for v in norms.values())
    assert np.allclose(norms["positional encoding"], (model.config.d_model / 2) ** 0.5, atol=1e-4)
    with pytest.raises(ValueError, match="ids for"):
        positional.embedding_parts(model, ids, tokens[:-1])


def test_normal_mode_is_what_encode_does_by_default(trained_tiny):
    model, pipeline = trained_tiny
    src = torch.tensor([pipeline.source_ids(pipeline.source_tokens("Mary sees the river."))])
    default = model.encode(src).memory
    explicit = model.encode(src, intervention=Intervention(source_positions="normal")).memory
    assert torch.equal(default, explicit)
    assert torch.equal(model.embed_source(src), model.positional(model.src_embed(src)))


def test_without_positions_the_encoder_cannot_see_word_order(trained_tiny):
    """Permutation equivariance: shuffling the tokens just shuffles the encoder's output rows."""
    model, pipeline = trained_tiny
    ids = pipeline.source_ids(pipeline.source_tokens("Tom likes the cat."))
    order = [3, 0, 4, 2, 1, 5]
    src, shuffled = torch.tensor([ids]), torch.tensor([[ids[i] for i in order]])
    removed = Intervention(source_positions="removed")
    plain = model.encode(src, intervention=removed).memory
    permuted = model.encode(shuffled, intervention=removed).memory
    assert torch.allclose(permuted[0], plain[0, order], atol=1e-5)
    with_positions = model.encode(shuffled).memory
    assert not torch.allclose(with_positions[0], model.encode(src).memory[0, order], atol=1e-3)


def test_shuffled_positions_are_a_fixed_non_identity_permutation(trained_tiny):
    for length in (2, 3, 7, 30):
        order = shuffled_positions(length)
        assert sorted(order) == list(range(length)) and order != list(range(length))
        assert order == shuffled_positions(length)
    assert positional.reading_order(["a", "b", "c"], [2, 0, 1]) == ["b", "c", "a"]
    model, pipeline = trained_tiny
    src = torch.tensor([pipeline.source_ids(pipeline.source_tokens("We like music."))])
    shuffled = model.embed_source(src, Intervention(source_positions="shuffled"))
    order = shuffled_positions(src.size(1))
    assert torch.allclose(shuffled, model.src_embed(src) + model.positional.table[order])
    with pytest.raises(ValueError, match="unknown position mode"):
        Intervention(source_positions="sideways")


@pytest.mark.parametrize("mode", list(POSITION_MODES))
def test_ablated_traces_keep_the_schema(trained_tiny, mode):
    model, pipeline = trained_tiny
    result = trace(model, pipeline, "They see apples.", intervention=Intervention(source_positions=mode))
    validate_trace(result.to_json())


def test_bag_of_words_check_translates_the_reversed_words_without_positions(trained_tiny):
    model, pipeline = trained_tiny
    original = trace(model, pipeline, "Tom likes the cat.")
    check = positional.bag_of_words_check(model, pipeline, original)
    assert check.reversed_text == ". cat the likes tom"
    removed = Intervention(source_positions="removed")
    without = trace(model, pipeline, original.source.text, intervention=removed).translation
    assert check.translation == trace(model, pipeline, check.reversed_text, intervention=removed).translation
    assert check.same == (check.translation == without)
    # Permutation equivariance makes the reversed words' encoder output a reordering of the original's,
    # so a model without positions usually gives the same translation (the page's point).
