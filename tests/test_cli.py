"""The command-line contract of DESIGN.md, run as a user would run it."""

import json
import subprocess
import sys

import pytest

from core.io.checkpoint import load_checkpoint, save_checkpoint
from core.io.paths import GRU_CHECKPOINT, ROOT
from tests.helpers.fixtures import synthetic_pairs, tiny_train_args, write_pairs
from tests.helpers.trace_schema import validate_trace


def run(args, stdin="", cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.fixture(scope="module")
def tiny_checkpoint(trained_tiny, tmp_path_factory):
    model, pipeline = trained_tiny
    path = tmp_path_factory.mktemp("ckpt") / "tiny.safetensors"
    return save_checkpoint(path, model, pipeline, {"train_config": {"dev_size": 5, "test_size": 10, "seed": 1}})


@pytest.mark.slow
def test_translate_keeps_one_line_out_per_line_in(tiny_checkpoint):
    lines = ["Tom likes tea.", "", "   ", "We see the cat.", "🙂🙂", "<script>alert(1)</script>"]
    result = run(["core.translate", "--checkpoint", str(tiny_checkpoint)], "\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout.split("\n")
    assert out[-1] == "" and len(out) - 1 == len(lines)
    assert out[0] == "汤姆喜欢茶。" and out[1] == "" and out[2] == ""


@pytest.mark.slow
def test_translate_with_beam_and_trace_writes_one_valid_json_object_per_line(tiny_checkpoint):
    lines = ["Tom likes tea.", "", "They see the river."]
    for extra in ([], ["--beam", "3"]):
        result = run(
            ["core.translate", "--checkpoint", str(tiny_checkpoint), "--trace", *extra], "\n".join(lines) + "\n"
        )
        assert result.returncode == 0, result.stderr
        traces = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(traces) == 3
        for data in traces:
            validate_trace(data)
        assert traces[0]["translation"] == "汤姆喜欢茶。" and traces[1]["steps"] == []


@pytest.mark.slow
def test_translate_trace_with_lens_adds_every_decoder_layers_top_k():
    lines = ["I like tea.", "", "The weather in Beijing is very cold in winter."]
    result = run(["core.translate", "--trace", "--lens"], "\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    traces = [json.loads(line) for line in result.stdout.splitlines()]
    for data in traces:
        validate_trace(data)  # checks the lens's shape and that its last layer is the steps' top_k
    assert [len(data["lens"]) for data in traces] == [3, 3, 3] and traces[1]["lens"] == [[], [], []]
    assert "lens" not in json.loads(run(["core.translate", "--trace"], "I like tea.\n").stdout)
    refused = run(["core.translate", "--lens"], "I like tea.\n")
    assert refused.returncode == 2 and "--trace" in refused.stderr
    gru = run(["core.translate", "--trace", "--lens", "--checkpoint", str(GRU_CHECKPOINT)], "I like tea.\n")
    assert gru.returncode == 2 and "GRU" in gru.stderr and "Traceback" not in gru.stderr


@pytest.mark.slow
def test_translate_reports_a_bad_checkpoint_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a model at all")
    result = run(["core.translate", "--checkpoint", str(bad)], "hello\n")
    assert result.returncode == 2 and "not a checkpoint" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_evaluate_prints_bleu_and_chrf_as_json(tiny_checkpoint, tmp_path):
    data = write_pairs(tmp_path / "pairs.txt", synthetic_pairs()[:30])
    result = run(["core.evaluate", "--checkpoint", str(tiny_checkpoint), "--data", str(data)])
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert scores["sentences"] == 30 and scores["bleu"] > 80 and 0 <= scores["chrf"] <= 100
    split = json.loads(
        run(["core.evaluate", "--checkpoint", str(tiny_checkpoint), "--data", str(data), "--split", "test"]).stdout
    )
    assert split["sentences"] == 10
    too_small = run(
        [
            "core.evaluate",
            "--checkpoint",
            str(tiny_checkpoint),
            "--data",
            str(write_pairs(tmp_path / "few.txt", synthetic_pairs()[:3])),
            "--split",
            "test",
        ]
    )
    assert (
        too_small.returncode == 2
        and "leaves no training data" in too_small.stderr
        and "Traceback" not in too_small.stderr
    )


@pytest.mark.slow
def test_training_smoke_run_lowers_the_loss_and_writes_a_loadable_checkpoint(tmp_path):
    data = write_pairs(tmp_path / "pairs.txt", synthetic_pairs() * 3, ("malformed line",))
    out = tmp_path / "model.safetensors"
    args = ["core.train", *tiny_train_args(data, out, 3)]
    result = run(args)
    assert result.returncode == 0, result.stderr
    loaded = load_checkpoint(out)
    card = loaded.card
    history = card["history"]
    assert len(history) == 3 and history[-1]["train_loss"] < history[0]["train_loss"]
    assert card["command"].startswith("python -m core.train --data") and len(card["data"]["sha256"]) == 64
    assert card["data"]["malformed_lines"] == 1 and card["split"]["test"]["english_sentences"] == 4
    assert {"bleu", "chrf"} <= set(card["test"]) and card["best_epoch"] >= 1
    snapshots = card["attention_snapshots"]["epochs"]
    assert len(snapshots) == 3 and len(snapshots[0]["probes"]) == 3
    probe = snapshots[-1]["probes"][0]
    assert len(probe["cross"]) == len(probe["decoder_tokens"]) and len(probe["cross"][0]) == len(probe["source_tokens"])
    resumed = run(["core.train", *tiny_train_args(data, out, 4, "--resume")])
    assert resumed.returncode == 0, resumed.stderr
    assert len(load_checkpoint(out).card["history"]) == 4
