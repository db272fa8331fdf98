"""Attribution methods and the logit lens, each checked against a reference: a recomputation from
the value vectors, a rollout worked out by hand, integrated gradients' completeness, finite
differences, and the model's own output for the lens's last layer."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch

from core.explain import attention_flow
from core.explain.__main__ import main as explain_main
from core.explain.attention_flow import AttentionChoice
from core.explain.attribution import METHODS, explain, explain_all, row_normalised, source_share, unsupported
from core.explain.gradients import completeness_gap, grad_x_input, integrated_gradients
from core.explain.lens import commit_layer, lens_json, logit_lens
from core.inference.source import Source
from core.inference.trace import Step, Trace, trace
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT
from core.model.attention import MultiHeadAttention
from core.model.intervention import HeadRef, Intervention
from core.model.registry import build_model
from core.text.pipeline import build_pipeline
from tests.helpers.fixtures import synthetic_pairs, tiny_config

SENTENCES = ["I like tea.", "The weather in Beijing is very cold in winter.", "Tom is taller than Mary."]


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(DEFAULT_CHECKPOINT)


@pytest.fixture(scope="module")
def untrained():
    """A random tiny Transformer (2+2 layers, 4 heads) and its pipeline."""
    torch.manual_seed(0)
    pipeline = build_pipeline(synthetic_pairs(), "char", min_freq=1)
    return build_model(tiny_config(pipeline)).eval(), pipeline


def head_vectors(attention: MultiHeadAttention, memory: torch.Tensor) -> torch.Tensor:
    """(H, S, d): f_h(x_s) = W_O[:, head h] (W_V[head h] x_s + b_V[head h]), one head and token at a time."""
    size = attention.head_dim
    rows = []
    for h in range(attention.n_heads):
        part = slice(h * size, (h + 1) * size)
        w_v, b_v, w_o = attention.v_proj.weight[part], attention.v_proj.bias[part], attention.out_proj.weight[:, part]
        rows.append(torch.stack([w_o @ (w_v @ x + b_v) for x in memory]))
    return torch.stack(rows)


@torch.no_grad()
def test_head_vectors_weighted_by_attention_add_up_to_the_attention_output():
    """The decomposition norm-based attention rests on: output_t = Σ_h Σ_s α^h_ts f_h(x_s) + b_O."""
    torch.manual_seed(1)
    attention = MultiHeadAttention(16, 4).eval()
    query, memory = torch.randn(1, 3, 16), torch.randn(1, 5, 16)
    output, weights = attention(query, memory, need_weights=True)
    vectors = head_vectors(attention, memory[0])
    rebuilt = torch.einsum("hts,hsd->td", weights[0], vectors) + attention.out_proj.bias
    torch.testing.assert_close(rebuilt, output[0], atol=1e-5, rtol=1e-5)


@torch.no_grad()
def test_norm_based_attention_equals_a_recomputation_from_value_vectors(untrained):
    model, pipeline = untrained
    result = trace(model, pipeline, "Tom likes tea.")
    memory = model.encode(torch.tensor([result.source.ids])).memory[0]
    expected = np.zeros((len(model.decoder_layers), len(result.steps), len(result.source.ids)))
    for layer, block in enumerate(model.decoder_layers):
        norms = head_vectors(block.cross_attn, memory).norm(dim=-1).numpy()  # (H, S)
        for h in range(model.config.n_heads):
            expected[layer] += result.cross[layer, h].numpy() * norms[h]
    np.testing.assert_allclose(attention_flow.norm_based(model, result), expected, rtol=1e-4, atol=1e-6)
    # a switched-off head contributes nothing (and the trace is of the model without it)
    off = Intervention(ablated_heads={HeadRef("cross", 1, 2)})
    ablated = trace(model, pipeline, "Tom likes tea.", intervention=off)
    with_head = attention_flow.norm_based(model, ablated)
    without = attention_flow.norm_based(model, ablated, off)
    np.testing.assert_allclose(with_head[0], without[0], rtol=1e-6)
    norms = head_vectors(model.decoder_layers[1].cross_attn, memory).norm(dim=-1).numpy()
    np.testing.assert_allclose(with_head[1] - without[1], ablated.cross[1, 2].numpy() * norms[2], rtol=1e-4, atol=1e-6)


def hand_made_trace(heads: int = 1) -> Trace:
    """2 source tokens, 2 steps; 2 encoder layers and 1 decoder layer with the maps worked out below
    (a second head, if asked for, attends elsewhere: it is the one the rollout test switches off)."""
    encoder = [[[1, 0], [1, 0]], [[0, 1], [0, 1]]]
    decoder, cross = [[[1, 0], [0.5, 0.5]]], [[[1, 0], [0, 1]]]

    def stack(maps, other):
        return torch.tensor([[m] + [other] * (heads - 1) for m in maps], dtype=torch.float64)

    return Trace(
        source=Source("a b", ["a"], ["a", "<eos>"], [4, 3]),
        decoder_tokens=["<bos>", "x"],
        translation="x",
        steps=[Step("x", 0.9, []), Step("<eos>", 0.9, [])],
        encoder=stack(encoder, [[0, 1], [1, 0]]),
        decoder=stack(decoder, [[1, 0], [1, 0]]),
        cross=stack(cross, [[0, 1], [1, 0]]),
        model_info={},
    )


def test_rollout_on_a_hand_made_two_layer_example():
    # Encoder: ½A+½I per layer. Â1 = [[1,0],[½,½]], Â2 = [[½,½],[0,1]], R = Â2·Â1 = [[¾,¼],[½,½]].
    # Decoder self: Â = [[1,0],[¼,¾]] over the prefix; cross: ½·mixed + ½·[A_c R | 0] with A_c = I.
    # Row 0: ½·[0,0 | 1,0] + ½·[¾,¼ | 0,0] = [⅜,⅛ | ½,0]; row 1: ½·[0,0 | ¼,¾] + ½·[½,½ | 0,0].
    source, prefix = attention_flow.rollout(hand_made_trace())
    np.testing.assert_allclose(source, [[0.375, 0.125], [0.25, 0.25]])
    np.testing.assert_allclose(prefix, [[0.5, 0.0], [0.125, 0.375]])
    # With a second head in every layer switched off, the result is the one-head model's.
    off = Intervention(
        ablated_heads={HeadRef(kind, layer, 1) for kind in ("encoder", "decoder", "cross") for layer in (0, 1)}
    )
    two_heads = hand_made_trace(heads=2)
    for got, want in zip(attention_flow.rollout(two_heads, off), (source, prefix)):
        np.testing.assert_allclose(got, want)
    assert not np.allclose(attention_flow.rollout(two_heads)[0], source)


def test_rollout_rows_sum_to_one_and_give_the_source_share(shipped):
    result = trace(shipped.model, shipped.pipeline, SENTENCES[1])
    attribution = explain(shipped.model, result, shipped.pipeline.tgt_vocab, "rollout")
    np.testing.assert_allclose(attribution.source.sum(1) + attribution.prefix.sum(1), 1.0, rtol=1e-6)
    # With ½A + ½I everywhere, each decoder layer's cross-attention hands half of every row to the
    # source: the share is 1 − 2^−L at every step, whatever the sentence (why the page takes the
    # source share from integrated gradients instead).
    layers = shipped.config.n_dec_layers
    np.testing.assert_allclose(source_share(attribution), 1 - 0.5**layers, rtol=1e-6)
    assert np.all(np.triu(attribution.prefix, k=1) == 0)  # a step draws on no later token


def test_raw_attention_views_pick_the_right_weights(shipped):
    result = trace(shipped.model, shipped.pipeline, SENTENCES[0])
    cross = result.cross.numpy()
    np.testing.assert_allclose(
        attention_flow.raw_attention(result, AttentionChoice()), cross.mean(axis=(0, 1)), rtol=1e-6
    )
    np.testing.assert_allclose(
        attention_flow.raw_attention(result, AttentionChoice("last")), cross[-1].mean(0), rtol=1e-6
    )
    head = AttentionChoice("head", HeadRef("cross", 2, 1))
    np.testing.assert_array_equal(attention_flow.raw_attention(result, head), cross[2, 1])
    off = Intervention(ablated_heads={HeadRef("cross", 2, 0)})
    last = attention_flow.raw_attention(result, AttentionChoice("last"), off)
    np.testing.assert_allclose(last, cross[2, 1:].mean(0), rtol=1e-6)
    with pytest.raises(ValueError, match="cross-attention head"):
        AttentionChoice("head", HeadRef("encoder", 0, 0))


@pytest.mark.slow
def test_integrated_gradients_are_complete_on_the_shipped_model(shipped):
    vocab = shipped.pipeline.tgt_vocab
    for sentence in SENTENCES:
        result = trace(shipped.model, shipped.pipeline, sentence)
        attribution = integrated_gradients(shipped.model, result, vocab)
        assert attribution.source.shape == (len(result.steps), len(result.source.ids))
        assert completeness_gap(attribution.source, attribution.prefix, attribution.delta) < 0.05
        assert np.all(np.triu(attribution.prefix, k=1) == 0)
        # f(input) is the log-probability the trace recorded: delta ≤ 0 would be log p ≤ f(baseline)
        assert np.isfinite(attribution.delta).all() and attribution.delta.shape == (len(result.steps),)


@pytest.mark.slow
def test_our_gradients_are_captums(shipped):
    """Captum, the PyTorch attribution library, is the reference: its IntegratedGradients (the same
    Gauss-Legendre points) and InputXGradient, one batch row per target, give our numbers."""
    from captum.attr import InputXGradient, IntegratedGradients

    from core.explain.gradients import _embeddings, _inputs, _log_probs

    vocab = shipped.pipeline.tgt_vocab
    result = trace(shipped.model, shipped.pipeline, SENTENCES[2])
    inputs = _inputs(shipped.model, result, vocab)
    forward = _log_probs(shipped.model, inputs, Intervention())
    steps = len(result.steps)
    copies = tuple(e.expand(steps, -1, -1).clone().requires_grad_() for e in _embeddings(shipped.model, inputs))
    targets = list(range(steps))
    captum_ig = IntegratedGradients(forward).attribute(copies, target=targets, n_steps=12)
    captum_gxi = InputXGradient(forward).attribute(copies, target=targets)
    ours_ig = integrated_gradients(shipped.model, result, vocab, n_steps=12)
    ours_gxi = grad_x_input(shipped.model, result, vocab)
    together = explain_all(shipped.model, result, vocab)  # one pass for both: the same numbers
    np.testing.assert_allclose(together["grad_x_input"].source, ours_gxi.source, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        together["ig"].prefix, integrated_gradients(shipped.model, result, vocab).prefix, rtol=1e-5
    )
    for ours, theirs in ((ours_ig, captum_ig), (ours_gxi, captum_gxi)):
        np.testing.assert_allclose(ours.source, theirs[0].sum(-1).detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours.prefix, theirs[1].sum(-1).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_gradient_times_input_matches_finite_differences(untrained):
    """grad·e for token s is the derivative of f along e_s itself: (f(e(1+ε)) − f(e(1−ε))) / 2ε."""
    model, pipeline = untrained
    model = build_model(model.config).double().eval()
    model.load_state_dict(untrained[0].state_dict())
    result = trace(model, pipeline, "Mary sees the river.")
    attribution = grad_x_input(model, result, pipeline.tgt_vocab)
    src = torch.tensor([result.source.ids])
    tgt = torch.tensor([[pipeline.tgt_vocab.stoi[t] for t in result.decoder_tokens]])
    produced = [pipeline.tgt_vocab.stoi[s.token] for s in result.steps]

    @torch.no_grad()
    def log_probs(source_scale: torch.Tensor, prefix_scale: torch.Tensor) -> np.ndarray:
        encoded = model.encode(src, token_embeddings=model.src_embed(src) * source_scale[None, :, None])
        logits, _, _ = model.decode(tgt, encoded, token_embeddings=model.tgt_embed(tgt) * prefix_scale[None, :, None])
        return torch.log_softmax(logits, -1)[0, range(len(produced)), produced].numpy()

    eps = 1e-5
    ones_s, ones_t = torch.ones(src.size(1), dtype=torch.float64), torch.ones(tgt.size(1), dtype=torch.float64)
    for s in range(src.size(1)):
        bump = torch.zeros_like(ones_s)
        bump[s] = eps
        numeric = (log_probs(ones_s + bump, ones_t) - log_probs(ones_s - bump, ones_t)) / (2 * eps)
        np.testing.assert_allclose(attribution.source[:, s], numeric, rtol=1e-5, atol=1e-8)
    for j in range(tgt.size(1)):
        bump = torch.zeros_like(ones_t)
        bump[j] = eps
        numeric = (log_probs(ones_s, ones_t + bump) - log_probs(ones_s, ones_t - bump)) / (2 * eps)
        np.testing.assert_allclose(attribution.prefix[:, j], numeric, rtol=1e-5, atol=1e-8)


def test_the_lens_last_layer_equals_the_traced_top_k(shipped, untrained):
    for model, pipeline in ((shipped.model, shipped.pipeline), untrained):
        result = trace(model, pipeline, SENTENCES[2], keep_layer_states=True)
        lens = logit_lens(model, result, pipeline.tgt_vocab)
        assert len(lens) == model.config.n_dec_layers and all(len(layer) == len(result.steps) for layer in lens)
        assert lens[-1] == [step.top_k for step in result.steps]
        assert all(commit_layer(lens, t) <= len(lens) - 1 for t in range(len(result.steps)))
    # the shared trace keeps no layer states unless asked (they are its largest part after attention)
    plain = trace(untrained[0], untrained[1], "Tom likes tea.")
    assert plain.layer_states is None
    with pytest.raises(ValueError, match="keep_layer_states"):
        logit_lens(untrained[0], plain, untrained[1].tgt_vocab)
    # a pre-LN model reads every layer through its final norm too
    torch.manual_seed(2)
    pre_ln = build_model(tiny_config(untrained[1], norm_first=True)).eval()
    result = trace(pre_ln, untrained[1], "Tom likes tea.", keep_layer_states=True)
    assert logit_lens(pre_ln, result, untrained[1].tgt_vocab)[-1] == [step.top_k for step in result.steps]


def test_commit_layer_is_where_the_final_token_arrives_to_stay():
    row = lambda token: [(token, 0.5)]  # noqa: E731
    lens = [[row("a")], [row("b")], [row("b")]]
    assert commit_layer(lens, 0) == 1
    assert commit_layer([[row("b")], [row("a")], [row("b")]], 0) == 2
    assert lens_json(lens)[0][0] == [["a", 0.5]]


def run_explain(monkeypatch, capsys, text: str, *args: str) -> tuple[int, list[dict], str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = explain_main(list(args))
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_the_explain_cli_writes_one_json_line_per_input_line(monkeypatch, capsys, method):
    code, lines, _ = run_explain(monkeypatch, capsys, "I like tea.\n\nHe is tall.\n", "--method", method)
    assert code == 0 and len(lines) == 3
    empty = lines[1]
    assert empty["source"] == [] and empty["source_tokens"] == [] and empty["method"] == method
    for line in (lines[0], lines[2]):
        steps, length = len(line["target_tokens"]), len(line["source_tokens"])
        assert line["method"] == method and len(line["decoder_tokens"]) == steps
        assert np.array(line["source"]).shape == (steps, length)
        assert (line["prefix"] is None) == (method in ("attention", "norm"))
        if line["prefix"] is not None:
            assert np.array(line["prefix"]).shape == (steps, steps)
        assert (line["delta"] is None) == (method != "ig")
        if method == "ig":  # completeness, checked from the JSON alone
            source, prefix, delta = (np.array(line[k]) for k in ("source", "prefix", "delta"))
            assert completeness_gap(source, prefix, delta) < 0.05
    assert lines[0]["target_tokens"][-1] == "<eos>"


@pytest.mark.slow
def test_the_explain_cli_refuses_what_it_cannot_do(monkeypatch, capsys):
    code, _, err = run_explain(
        monkeypatch, capsys, "I like tea.\n", "--method", "rollout", "--checkpoint", str(GRU_CHECKPOINT)
    )
    assert code == 2 and "GRU" in err
    code, _, err = run_explain(monkeypatch, capsys, "x\n", "--method", "attention", "--attention", "cross:9:1")
    assert code == 2 and "layer 9" in err
    with pytest.raises(SystemExit):
        run_explain(monkeypatch, capsys, "x\n", "--method", "attention", "--attention", "enc:1:1,cross:1:1")
    code, lines, _ = run_explain(
        monkeypatch, capsys, "I like tea.\n", "--method", "attention", "--attention", "cross:3:2"
    )
    assert code == 0 and lines[0]["source"][0] == pytest.approx(
        trace(*_shipped_pair(), "I like tea.").cross[2, 1, 0].tolist(), rel=1e-6
    )


def _shipped_pair():
    loaded = load_checkpoint(DEFAULT_CHECKPOINT)
    return loaded.model, loaded.pipeline


@pytest.mark.slow
def test_gru_models_have_attention_and_gradients_but_no_rollout_norm_or_lens():
    gru = load_checkpoint(GRU_CHECKPOINT)
    result = trace(gru.model, gru.pipeline, "I like tea.")
    vocab = gru.pipeline.tgt_vocab
    for method in ("attention", "grad_x_input", "ig"):
        assert unsupported(gru.model, method) is None
        attribution = explain(gru.model, result, vocab, method)
        assert attribution.source.shape == (len(result.steps), len(result.source.ids))
    ig = explain(gru.model, result, vocab, "ig")
    assert completeness_gap(ig.source, ig.prefix, ig.delta) < 0.05
    for method in ("norm", "rollout"):
        assert "GRU" in unsupported(gru.model, method)
        with pytest.raises(ValueError, match="GRU"):
            explain(gru.model, result, vocab, method)
    with pytest.raises(ValueError, match="GRU"):
        logit_lens(gru.model, result, vocab)


def test_row_normalising_keeps_signs_and_leaves_empty_rows_alone():
    matrix = np.array([[1.0, -3.0], [0.0, 0.0]])
    np.testing.assert_allclose(row_normalised(matrix), [[0.25, -0.75], [0.0, 0.0]])
