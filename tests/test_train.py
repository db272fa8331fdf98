"""The training loop: schedule, epochs, optimizer groups, resume state, reproducibility, and Ctrl-C
leaving a usable checkpoint."""

import signal
import subprocess
import sys
import time

import pytest
import torch

from core.io.checkpoint import load_checkpoint
from core.io.paths import ROOT
from core.model.registry import build_model
from core.model.transformer import Transformer
from core.text.pipeline import build_pipeline
from core.training.config import TrainConfig
from core.training.data import encode_pairs
from core.training.schedule import warmup_cosine
from core.training.trainer import Trainer
from tests.helpers.fixtures import synthetic_pairs, tiny_config, tiny_train_args, write_pairs


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


def test_an_epoch_takes_every_batch_and_records_its_row_snapshot_and_best(capsys):
    trainer = make_trainer()
    trainer.fit()
    assert trainer.step == trainer.steps_per_epoch and trainer.epoch == 1
    (row,) = trainer.history
    assert row.epoch == 1 and row.train_loss > 0 and row.dev_loss > 0 and row.dev_bleu is not None
    assert f"epoch 1: train loss {row.train_loss:.3f}" in capsys.readouterr().err
    assert len(trainer.snapshots) == 1 and trainer.best.epoch == 1 and trainer.best.state is not None


def test_resume_state_survives_the_safe_loader(tmp_path):
    trainer = make_trainer()
    trainer.fit()
    torch.save(trainer.state(), tmp_path / "state.pt")
    resumed = make_trainer()
    resumed.load_state(torch.load(tmp_path / "state.pt", weights_only=True))
    assert resumed.history == trainer.history and resumed.snapshots == trainer.snapshots
    assert (resumed.step, resumed.epoch, resumed.best.epoch) == (trainer.step, trainer.epoch, trainer.best.epoch)
    assert all(torch.equal(a, b) for a, b in zip(resumed.best.state.values(), trainer.best.state.values()))


@pytest.mark.parametrize("arch", ["transformer", "rnn"])
def test_weight_decay_groups_come_from_the_model(arch):
    """Weight matrices decay; embedding tables (found by module type), biases and norm gains do not."""
    pipeline = build_pipeline(synthetic_pairs(), "char", 1)
    overrides = {"arch": "rnn", "n_heads": 1} if arch == "rnn" else {}
    model = build_model(tiny_config(pipeline, **overrides))
    decay, no_decay = (set(map(id, group["params"])) for group in model.optimizer_groups(0.01))
    for name, parameter in model.named_parameters():
        expected = parameter.dim() >= 2 and "embed" not in name  # embeddings are named *embed* in both models
        assert (id(parameter) in decay) == expected and (id(parameter) in no_decay) != expected, name
    assert [g["weight_decay"] for g in model.optimizer_groups(0.01)] == [0.01, 0.0]


def test_training_is_reproducible_with_a_seed():
    first, second = make_trainer(seed=3), make_trainer(seed=3)
    first.fit()
    second.fit()
    for (name, a), b in zip(first.model.state_dict().items(), second.model.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.mark.slow
def test_ctrl_c_leaves_a_usable_checkpoint(tmp_path):
    data = write_pairs(tmp_path / "pairs.txt", synthetic_pairs() * 4)
    out = tmp_path / "model.safetensors"
    args = tiny_train_args(data, out, 500)
    # A shell without job control starts background jobs with SIGINT ignored, and Python then keeps
    # ignoring it: give the child the default disposition, as a terminal would.
    process = subprocess.Popen(
        [sys.executable, "-m", "core.train", *args],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 180
    while not out.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.5)
    assert out.exists(), "no checkpoint after the first epoch"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=180)
    assert "interrupted" in stderr and "Traceback" not in stderr
    loaded = load_checkpoint(out)
    assert len(loaded.card["history"]) < 500 and loaded.card["best_epoch"] >= 1
