"""The GRU encoder-decoder with Bahdanau attention: the attention formula, masking, learning,
decoding, traces and checkpoints, through the same code paths as the Transformer."""

import math

import pytest
import torch

from core.inference.batch import translate
from core.inference.greedy import greedy_ids
from core.inference.trace import trace
from core.io.checkpoint import load_checkpoint, save_checkpoint
from core.model.attention import AdditiveAttention
from core.model.config import ModelConfig
from core.model.registry import check_config
from core.model.rnn import BahdanauSeq2Seq
from core.text.vocab import PAD_ID
from tests.helpers.fixtures import synthetic_pairs, train_tiny
from tests.helpers.trace_schema import validate_trace


def test_additive_attention_equals_the_formula_on_a_hand_computed_example():
    attention = AdditiveAttention(query_dim=2, key_dim=2, attention_dim=2)
    with torch.no_grad():
        attention.w_s.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        attention.w_h.weight.copy_(torch.tensor([[0.5, 0.0], [0.0, -1.0]]))
        attention.v.weight.copy_(torch.tensor([[1.0, 2.0]]))
    state = torch.tensor([[0.2, -0.1]])
    memory = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]])
    mask = torch.tensor([[True, True, False]])
    context, weights = attention(state, attention.project_keys(memory), memory, mask)
    # by hand: score_j = tanh(0.2 + 0.5 h_j1) + 2 tanh(-0.1 - h_j2)
    scores = [math.tanh(0.2 + 0.5) + 2 * math.tanh(-0.1), math.tanh(0.2) + 2 * math.tanh(-1.1)]
    expected = torch.softmax(torch.tensor(scores), dim=0)
    assert torch.allclose(weights[0, :2], expected, atol=1e-6) and weights[0, 2] == 0.0
    assert torch.allclose(context[0], expected[0] * memory[0, 0] + expected[1] * memory[0, 1], atol=1e-6)


def test_additive_attention_rows_sum_to_one_padding_gets_zero_and_empty_rows_no_nan():
    torch.manual_seed(0)
    attention = AdditiveAttention(8, 6, 5)
    memory = torch.randn(3, 4, 6)
    mask = torch.tensor([[True] * 4, [True, True, False, False], [False] * 4])
    _, weights = attention(torch.randn(3, 8), attention.project_keys(memory), memory, mask)
    assert torch.allclose(weights[:2].sum(-1), torch.ones(2)) and (weights[1, 2:] == 0).all()
    assert (weights[2] == 0).all() and not weights.isnan().any()


@pytest.fixture(scope="module")
def gru():
    """A tiny GRU model fitted to the 72 synthetic pairs."""
    pairs = synthetic_pairs()
    model, pipeline = train_tiny(pairs, steps=300, lr=1e-2, n_heads=1, n_enc_layers=2, n_dec_layers=1, arch="rnn")
    assert isinstance(model, BahdanauSeq2Seq)
    return model, pipeline, pairs


@pytest.mark.slow  # the GRU fixture trains for ~8 s
def test_the_gru_model_learns_the_tiny_task(gru):
    model, pipeline, pairs = gru
    outputs = translate(model, pipeline, [p.en for p in pairs])
    assert sum(o.text == p.zh for o, p in zip(outputs, pairs)) >= 70


@pytest.mark.slow  # the GRU fixture trains for ~8 s
def test_stepwise_decoding_equals_the_full_pass_and_padding_changes_nothing(gru):
    model, pipeline, _ = gru
    src = torch.tensor([pipeline.source_ids(pipeline.source_tokens("Mary sees the river."))])
    encoded = model.encode(src)
    tgt = torch.tensor([[2, 5, 6, 7, 8]])
    full, _, cross = model.decode(tgt, encoded, return_attention=True)
    cache = model.new_cache()
    steps = [model.decode(tgt[:, t : t + 1], encoded, True, cache, t) for t in range(tgt.size(1))]
    assert torch.allclose(torch.cat([s[0] for s in steps], dim=1), full, atol=1e-5)
    assert torch.allclose(torch.cat([s[2][0] for s in steps], dim=2), cross[0], atol=1e-6)
    padded = torch.cat([src, torch.full((1, 3), PAD_ID)], dim=1)
    padded_full, _, padded_cross = model.decode(tgt, model.encode(padded), return_attention=True)
    assert torch.allclose(padded_full, full, atol=1e-5) and (padded_cross[0][..., -3:] == 0).all()


@pytest.mark.slow  # the GRU fixture trains for ~8 s
def test_batched_greedy_beam_and_trace_go_through_the_shared_decoder(gru):
    model, pipeline, pairs = gru
    sources = [pipeline.source_ids(pipeline.source_tokens(p.en)) for p in pairs[:6]]
    assert greedy_ids(model, sources) == [greedy_ids(model, [s])[0] for s in sources]
    assert translate(model, pipeline, ["Tom likes tea."], beam_size=3)[0].text == "汤姆喜欢茶。"
    result = trace(model, pipeline, "Tom likes tea.")
    assert result.translation == "汤姆喜欢茶。" and result.cross.shape == (1, 1, len(result.steps), 5)
    assert result.encoder.shape[0] == 0 and result.decoder.shape[0] == 0
    data = result.to_json()
    validate_trace(data)
    assert data["model"]["arch"] == "rnn" and data["attention"]["encoder"] == []


@pytest.mark.slow  # the GRU fixture trains for ~8 s
def test_gru_checkpoints_round_trip_and_say_their_architecture(gru, tmp_path):
    model, pipeline, _ = gru
    for name in ("gru.safetensors", "gru.pt"):
        path = save_checkpoint(tmp_path / name, model, pipeline, half=False)
        loaded = load_checkpoint(path)
        assert isinstance(loaded.model, BahdanauSeq2Seq) and loaded.config.arch == "rnn"
        src = torch.tensor([pipeline.source_ids(pipeline.source_tokens("We see apples."))])
        tgt = torch.tensor([[2, 5, 6]])
        assert torch.equal(loaded.model(src, tgt).logits, model(src, tgt).logits)


def test_an_rnn_config_needs_one_head_and_an_even_width():
    with pytest.raises(ValueError, match="n_heads=1"):
        check_config(ModelConfig(10, 10, d_model=32, n_heads=4, arch="rnn"))
    with pytest.raises(ValueError, match="arch="):
        check_config(ModelConfig(10, 10, arch="lstm"))


@pytest.mark.slow  # the GRU fixture trains for ~8 s
def test_translate_cli_traces_the_gru_including_empty_lines(gru, tmp_path):
    import json
    import subprocess
    import sys

    model, pipeline, _ = gru
    path = save_checkpoint(tmp_path / "gru.safetensors", model, pipeline)
    result = subprocess.run(
        [sys.executable, "-m", "core.translate", "--checkpoint", str(path), "--trace"],
        input="Tom likes tea.\n\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 2 and lines[0]["translation"] == "汤姆喜欢茶。"
    for line in lines:
        validate_trace(line)
