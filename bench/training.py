"""Benchmark 1: one training step (forward, backward, AdamW) of our model vs torch.nn.Transformer
with the same configuration, initial weights and batches. Rounds alternate between the two
models so that both see the same machine load; the ratio is the median over rounds."""

from __future__ import annotations

from statistics import median
from typing import Any

import torch
from torch import Tensor, nn

from bench.reference import from_ours
from bench.timing import timed
from bench.workload import Workload
from core.model.transformer import Transformer
from core.text.vocab import PAD_ID

CRITERION = nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=0.1)


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.01)


def _step_ms(model: nn.Module, optimizer: torch.optim.Optimizer, src: Tensor, tgt: Tensor) -> float:
    """One forward + backward + optimizer step; milliseconds."""

    def step() -> None:
        out = model(src, tgt[:, :-1])
        logits = out.logits if hasattr(out, "logits") else out
        loss = CRITERION(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return timed(step)[1]


def run(workload: Workload, batches: int, rounds: int, max_tokens: int = 3000) -> dict[str, Any]:
    """Each batch is stepped by both models back to back (alternating which goes first), so a busy
    moment of the machine hits both; tokens/s and the ratio are medians over rounds."""
    config = workload.loaded.config  # the shipped architecture, dropout included
    torch.manual_seed(0)
    ours = Transformer(config).train()
    models = {"ours": ours, "torch": from_ours(ours).train()}
    optimizers = {name: _optimizer(model) for name, model in models.items()}
    data = workload.training_batches(batches + 1, max_tokens)
    warmup, measured = data[:1], data[1:] or data  # a tiny data set may have a single batch
    tokens = sum(int((tgt[:, 1:] != PAD_ID).sum()) for _, tgt in measured)
    for src, tgt in warmup:
        for name, model in models.items():
            _step_ms(model, optimizers[name], src, tgt)
    per_round: dict[str, list[float]] = {"ours": [], "torch": []}
    for _ in range(rounds):
        spent = {"ours": 0.0, "torch": 0.0}
        for index, (src, tgt) in enumerate(measured):
            for name in ("ours", "torch") if index % 2 == 0 else ("torch", "ours"):
                spent[name] += _step_ms(models[name], optimizers[name], src, tgt)
        for name in spent:
            per_round[name].append(tokens / (spent[name] / 1000))
    ratios = [o / t for o, t in zip(per_round["ours"], per_round["torch"])]
    return {
        "batches": len(measured),
        "target_tokens": tokens,
        "rounds": rounds,
        "ours_tokens_per_s": median(per_round["ours"]),
        "torch_tokens_per_s": median(per_round["torch"]),
        "ratio": median(ratios),
        "ratios": ratios,
        "config": f"d_model {config.d_model}, {config.n_heads} heads, {config.n_enc_layers}+{config.n_dec_layers} layers, "
        f"FFN {config.d_ff}, dropout {config.dropout}, vocab {config.src_vocab_size}/{config.tgt_vocab_size}",
    }
