"""The benchmark compares like with like: torch.nn.Transformer with our weights computes our
function, the three greedy decoders agree, and `python -m bench` runs end to end."""

import json

import pytest
import torch

from bench.__main__ import main as bench_main
from bench.decoders import DECODERS, greedy
from bench.reference import from_ours
from core.inference.greedy import greedy_ids
from core.inference.source import prepare_source
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.text.vocab import PAD_ID
from tests.helpers.fixtures import synthetic_pairs

SRC = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, PAD_ID, PAD_ID]])
TGT = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 2, PAD_ID, PAD_ID]])


def random_model(norm_first: bool, tie: bool, dropout: float = 0.0) -> Transformer:
    torch.manual_seed(3)
    config = ModelConfig(20, 20, 16, 4, 2, 2, 32, dropout, 32, norm_first, tie)
    model = Transformer(config)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return model


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie", [True, False])
def test_torch_reference_with_copied_weights_computes_our_logits(norm_first, tie):
    ours = random_model(norm_first, tie).eval()
    theirs = from_ours(ours).eval()
    with torch.no_grad():
        expected, actual = ours(SRC, TGT).logits, theirs(SRC, TGT)
    real = TGT != PAD_ID
    torch.testing.assert_close(actual[real], expected[real], atol=1e-4, rtol=1e-4)


def test_one_training_step_is_the_same_computation_in_both_models():
    """No dropout: same loss and same gradients, so the timing compares implementations only."""
    ours = random_model(False, True).train()
    theirs = from_ours(ours).train()
    criterion = torch.nn.CrossEntropyLoss(ignore_index=PAD_ID)
    losses = []
    for model in (ours, theirs):
        out = model(SRC, TGT[:, :-1])
        logits = out.logits if hasattr(out, "logits") else out
        loss = criterion(logits.reshape(-1, logits.size(-1)), TGT[:, 1:].reshape(-1))
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], abs=1e-5)
    torch.testing.assert_close(theirs.tgt_embed.weight.grad, ours.tgt_embed.weight.grad, atol=1e-4, rtol=1e-4)
    ours_ffn = ours.decoder_layers[1].ffn.linear1.weight.grad
    torch.testing.assert_close(theirs.transformer.decoder.layers[1].linear1.weight.grad, ours_ffn, atol=1e-4, rtol=1e-4)


def test_the_three_decoders_give_the_production_decoder_tokens(trained_tiny):
    model, pipeline = trained_tiny
    reference = from_ours(model).eval()
    sources = [prepare_source(model, pipeline, p.en).ids for p in synthetic_pairs()[:12]]
    expected = greedy_ids(model, sources)
    for name in DECODERS:
        assert greedy(name, model, reference, sources) == expected, name
        assert [greedy(name, model, reference, [s])[0] for s in sources[:3]] == expected[:3], name
    forced = [greedy(name, model, reference, sources[:2], forced_steps=30) for name in DECODERS]
    assert all(len(row) == 30 for row in forced[0]) and forced[0] == forced[1] == forced[2]


@pytest.mark.slow
def test_bench_runs_end_to_end_and_writes_every_number(trained_checkpoint, tmp_path, capsys):
    data = trained_checkpoint.parent / "pairs.txt"
    out = tmp_path / "bench.json"
    args = ["--checkpoint", str(trained_checkpoint), "--data", str(data), "--quick", "--no-browser", "--json", str(out)]
    assert bench_main(args) == 0
    printed = capsys.readouterr().out
    for heading in (
        "## 1. Training step",
        "## 2. Greedy decoding",
        "## 3. App path",
        "## 4. Scaling",
        "## 5. Head atlas",
        "## 6. Explaining every output token",
    ):
        assert heading in printed
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["training"]["ours_tokens_per_s"] > 0 and results["training"]["torch_tokens_per_s"] > 0
    assert {row["decoder"] for row in results["decoding"]["rows"]} == set(DECODERS)
    assert all(row["mean_output_tokens"] == 30 for row in results["decoding"]["rows"] if "forced" in row["setting"])
    assert results["app"]["app_trace_ms_p50"] > 0 and results["app"]["default_trace_ms_p50"] > 0
    assert results["app"]["rss_model_loaded_mb"] > results["app"]["rss_python_and_torch_mb"] > 0
    assert [row["source_tokens"] for row in results["scaling"]][:2] == [5, 10]
    assert results["heads"]["atlas"]["heads"] == 6 and results["heads"]["atlas"]["seconds"] > 0
    explained = results["explain"]["methods"]
    assert explained["sentences"] == 3 and explained["ms_median"]["ig"] > 0 and explained["ig_gap_max"] >= 0


def test_bench_refuses_unknown_sections_and_missing_data(trained_checkpoint, tmp_path):
    with pytest.raises(SystemExit, match="unknown sections"):
        bench_main(["--checkpoint", str(trained_checkpoint), "--only", "speed"])
    with pytest.raises(SystemExit, match="no data file"):
        bench_main(["--checkpoint", str(trained_checkpoint), "--data", str(tmp_path / "missing.txt")])
