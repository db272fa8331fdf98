"""Data-parallel training: torchrun with 2 CPU processes (gloo) takes the same steps as one process
on the same global batches."""

import subprocess
import sys

import pytest
import torch

from core.io.checkpoint import load_checkpoint
from core.text.batches import iterate_batches
from core.train import main as train_main
from core.training.config import TrainConfig
from core.training.data import encode_pairs
from core.training.distributed import Workers
from tests.helpers.fixtures import synthetic_pairs, tiny_train_args, write_pairs

pytestmark = [pytest.mark.slow]

# One epoch (best epoch = last), no dropout (its random masks differ between processes), float32 on disk.
EXACT = ("--dropout", "0", "--full-precision")


def test_shards_partition_the_batch_and_a_missing_row_weighs_nothing():
    src = torch.tensor([[5, 6, 0], [5, 0, 0], [7, 8, 9]])
    tgt = torch.tensor([[1, 5, 2], [1, 2, 0], [1, 6, 2]])
    first, second = Workers(0, 2), Workers(1, 2)
    s0, t0, w0 = first.shard(src, tgt)
    s1, t1, w1 = second.shard(src, tgt)
    assert s0.tolist() == [[5, 6, 0], [7, 8, 9]] and t0.tolist() == [[1, 5, 2], [1, 6, 2]] and w0 == 1.0
    assert s1.tolist() == [[5]] and t1.tolist() == [[1, 2]] and w1 == 1.0  # padding columns trimmed
    _, _, weight = Workers(2, 4).shard(src[:1], tgt[:1])
    assert weight == 0.0  # a stand-in row keeps this process in step without changing the gradient


def test_two_processes_match_one_process_on_the_same_global_batches(tmp_path):
    data = write_pairs(tmp_path / "pairs.txt", synthetic_pairs() * 3)
    single, double = tmp_path / "one.safetensors", tmp_path / "two.safetensors"
    assert train_main(tiny_train_args(data, single, 1, *EXACT)) == 0
    # --standalone: torchrun finds a free port itself (a port picked beforehand may be taken by then)
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
        "-m", "core.train", *tiny_train_args(data, double, 1, *EXACT),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]

    one, two = load_checkpoint(single), load_checkpoint(double)
    assert two.card["processes"] == 2 and one.card["processes"] == 1
    assert one.card["history"][0]["train_loss"] == pytest.approx(two.card["history"][0]["train_loss"], abs=1e-4)
    assert one.card["history"][0]["dev_loss"] == pytest.approx(two.card["history"][0]["dev_loss"], abs=1e-4)
    ours, theirs = one.model.state_dict(), two.model.state_dict()
    for name, tensor in ours.items():
        if name.endswith("k_proj.bias"):
            # Softmax ignores a constant added to every score of a query, so the key bias's true gradient
            # is 0; Adam normalises the rounding noise it gets into full-size steps. The output
            # comparison below shows it does not matter.
            continue
        torch.testing.assert_close(tensor, theirs[name], atol=1e-5, rtol=0, msg=name)
    examples, _ = encode_pairs(synthetic_pairs(), one.pipeline, TrainConfig())
    src, tgt = next(iter(iterate_batches(examples, 2000)))
    with torch.no_grad():
        torch.testing.assert_close(
            one.model(src, tgt[:, :-1]).logits, two.model(src, tgt[:, :-1]).logits, atol=1e-4, rtol=0
        )
