"""The training loop: schedule, callbacks, reproducibility, and Ctrl-C leaving a usable checkpoint."""

import signal
import subprocess
import sys
import time

import pytest
import torch

from core.checkpoint import load_checkpoint
from core.config import TrainConfig
from core.train import Trainer, encode_pairs, warmup_cosine
from core.transformer import Transformer
from core.vocab_build import build_pipeline
from tests.fixtures import synthetic_pairs, tiny_config, write_pairs
from tests.test_cli import ROOT


def make_trainer(seed=0) -> Trainer:
    torch.manual_seed(seed)
    pairs = synthetic_pairs()
    config = TrainConfig(max_tokens=300, warmup_steps=5, epochs=1, dev_size=4, test_size=4, lr=3e-3, seed=seed)
    pipeline = build_pipeline(pairs[8:], "char", 1)
    examples, _ = encode_pairs(pairs[8:], pipeline, config)
    return Trainer(Transformer(tiny_config(pipeline)), pipeline, config, examples, pairs[:4], torch.device("cpu"))


def test_warmup_then_cosine_decay():
    lrs = [warmup_cosine(step, 10, 100) for step in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(lrs[10:], lrs[11:])) and lrs[-1] == pytest.approx(0.05, abs=0.01)


def test_callbacks_receive_batch_and_epoch_events():
    trainer = make_trainer()
    events = []
    trainer.add_callback("on_batch_end", lambda t, info: events.append(("batch", info["step"], info["loss"])))
    trainer.add_callback("on_epoch_end", lambda t, info: events.append(("epoch", info["epoch"], info["dev_bleu"])))
    trainer.fit()
    batches = [e for e in events if e[0] == "batch"]
    assert len(batches) == trainer.steps_per_epoch and events[-1][:2] == ("epoch", 1)
    assert len(trainer.snapshots) == 1 and trainer.best["epoch"] == 1


def test_training_is_reproducible_with_a_seed():
    first, second = make_trainer(seed=3), make_trainer(seed=3)
    first.fit()
    second.fit()
    for (name, a), b in zip(first.model.state_dict().items(), second.model.state_dict().values()):
        assert torch.equal(a, b), name


def test_ctrl_c_leaves_a_usable_checkpoint(tmp_path):
    data = write_pairs(tmp_path / "pairs.txt", synthetic_pairs() * 4)
    out = tmp_path / "model.safetensors"
    args = ["--data", str(data), "--out", str(out), "--epochs", "500", "--dev-size", "4", "--test-size", "4",
            "--d-model", "32", "--n-heads", "2", "--n-enc-layers", "1", "--n-dec-layers", "1", "--d-ff", "64",
            "--max-tokens", "300", "--min-freq", "1"]  # fmt: skip
    process = subprocess.Popen([sys.executable, "-m", "core.train", *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while not out.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.5)
    assert out.exists(), "no checkpoint after the first epoch"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=180)
    assert "interrupted" in stderr and "Traceback" not in stderr
    loaded = load_checkpoint(out)
    assert len(loaded.card["history"]) < 500 and loaded.card["best_epoch"] >= 1
