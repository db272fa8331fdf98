"""The training loop: label smoothing, AdamW with warmup + cosine decay, clipping, length-bucketed
batches; after each epoch dev loss and dev BLEU, the best weights kept, and the probe sentences'
cross-attention snapshotted for the card."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from core.inference.batch import translate
from core.inference.trace import trace
from core.io.card import EpochRecord, EpochSnapshots, ProbeSnapshot
from core.model.base import Seq2Seq
from core.text.batches import bucket_batches, iterate_batches
from core.text.data import Pair, group_references
from core.text.pipeline import TextPipeline
from core.text.vocab import PAD_ID
from core.training.config import TrainConfig
from core.training.data import Example, encode_pairs
from core.training.distributed import SINGLE_PROCESS, Workers
from core.training.schedule import warmup_cosine
from core.training.scoring import score

PROBE_SENTENCES = ("I like to read books.", "Tom is taller than Mary.", "Where is the train station?")


@dataclass
class BestEpoch:
    """The epoch with the best dev BLEU so far, and a copy of its weights."""

    dev_bleu: float = -1.0
    epoch: int = 0
    state: dict[str, torch.Tensor] | None = None


class Trainer:
    """Owns the model, optimizer and loop. Progress goes to a tqdm bar (batches) and one line per
    epoch on stderr; the history and the probes' attention snapshots go into the card."""

    def __init__(
        self,
        model: Seq2Seq,
        pipeline: TextPipeline,
        config: TrainConfig,
        train_examples: list[Example],
        dev_pairs: Sequence[Pair],
        device: torch.device,
        workers: Workers = SINGLE_PROCESS,
    ):
        self.model = model.to(device)
        self.workers = workers
        # Under torchrun, DDP averages the gradients of the processes' slices during backward.
        self.train_model: nn.Module = (
            DistributedDataParallel(self.model, device_ids=[device] if device.type == "cuda" else None)
            if workers.distributed
            else self.model
        )
        self.pipeline = pipeline
        self.config = config
        self.device = device
        self.train_examples = train_examples
        self.dev_sources, self.dev_references = group_references(dev_pairs)
        self.dev_examples, _ = encode_pairs(dev_pairs, pipeline, config)
        self.optimizer = torch.optim.AdamW(
            model.optimizer_groups(config.weight_decay), lr=config.lr, betas=(0.9, 0.98), eps=1e-9
        )
        self.steps_per_epoch = len(bucket_batches([len(s) + len(t) for s, t in train_examples], config.max_tokens))
        self.total_steps = self.steps_per_epoch * config.epochs
        # Summed, then divided by the global batch's target tokens: one process on the whole batch and
        # N processes on its slices then take the same step (the per-token mean of the whole batch).
        self.criterion = nn.CrossEntropyLoss(
            ignore_index=PAD_ID, label_smoothing=config.label_smoothing, reduction="sum"
        )
        self.step = 0
        self.epoch = 0
        self.history: list[EpochRecord] = []
        self.snapshots: list[EpochSnapshots] = []
        self.best = BestEpoch()

    def _set_lr(self) -> float:
        lr = self.config.lr * warmup_cosine(self.step, self.config.warmup_steps, self.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr

    def train_epoch(self, deadline: float | None) -> float:
        """One pass over the training data; returns the mean label-smoothed loss per target token."""
        self.model.train()
        rng = random.Random(self.config.seed * 1000 + self.epoch)
        total_loss, total_tokens, started = 0.0, 0, time.perf_counter()
        bar = tqdm(
            iterate_batches(self.train_examples, self.config.max_tokens, rng),
            total=self.steps_per_epoch,
            desc=f"epoch {self.epoch + 1}",
            leave=False,
            file=sys.stderr,
            mininterval=2,
            disable=not self.workers.is_main,
        )
        for batch_src, batch_tgt in bar:
            tokens = int((batch_tgt[:, 1:] != PAD_ID).sum())  # of the global batch, known to every process
            src, tgt, weight = self.workers.shard(batch_src, batch_tgt)
            src, tgt = src.to(self.device), tgt.to(self.device)
            lr = self._set_lr()
            logits = self.train_model(src, tgt[:, :-1]).logits
            summed = self.criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
            # DDP averages gradients over processes, hence the factor world_size.
            loss = summed * (weight * self.workers.world_size / tokens)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip_norm)
            self.optimizer.step()
            self.step += 1
            batch_loss = self.workers.sum(weight * summed.item(), self.device) / tokens
            total_loss += batch_loss * tokens
            total_tokens += tokens
            tokens_per_s = total_tokens / (time.perf_counter() - started)
            bar.set_postfix(loss=f"{batch_loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{tokens_per_s:.0f}", refresh=False)
            # The deadline is the same everywhere, so without one no process needs to ask the others.
            if deadline and self.workers.any(time.perf_counter() > deadline, self.device):
                break
        return total_loss / max(1, total_tokens)

    @torch.no_grad()
    def dev_loss(self) -> float:
        """Plain cross-entropy per target token (no label smoothing), teacher-forced."""
        self.model.eval()
        criterion = nn.CrossEntropyLoss(ignore_index=PAD_ID, reduction="sum")
        total, tokens = 0.0, 0
        for src, tgt in iterate_batches(self.dev_examples, self.config.max_tokens):
            src, tgt = src.to(self.device), tgt.to(self.device)
            logits = self.model(src, tgt[:, :-1]).logits
            total += criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1)).item()
            tokens += int((tgt[:, 1:] != PAD_ID).sum())
        return total / max(1, tokens)

    def evaluate(self, sources: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
        self.model.eval()
        hypotheses = [t.text for t in translate(self.model, self.pipeline, sources)]
        return score(hypotheses, references)

    def snapshot_probes(self) -> None:
        """Cross-attention of the probe sentences, averaged over layers and heads, 3 decimals."""
        self.model.eval()
        items = []
        for sentence in PROBE_SENTENCES:
            t = trace(self.model, self.pipeline, sentence)
            cross = t.cross.mean(dim=(0, 1))
            items.append(
                ProbeSnapshot(t.source.tokens, t.decoder_tokens, [[round(x, 3) for x in row] for row in cross.tolist()])
            )
        self.snapshots.append(EpochSnapshots(self.epoch, items))

    def fit(self, deadline: float | None = None, on_best: Callable[[], None] | None = None) -> None:
        """Train epoch by epoch; after each, the main process evaluates on dev and keeps the best."""
        while self.epoch < self.config.epochs:
            started = time.perf_counter()
            train_loss = self.train_epoch(deadline)
            self.epoch += 1
            if self.workers.is_main:
                self._end_epoch(train_loss, started, on_best)
            if deadline and self.workers.any(time.perf_counter() > deadline, self.device):
                if self.workers.is_main:
                    tqdm.write(f"time budget reached after epoch {self.epoch}", file=sys.stderr)
                break

    def _end_epoch(self, train_loss: float, started: float, on_best: Callable[[], None] | None) -> None:
        dev = self.evaluate(self.dev_sources, self.dev_references)
        row = EpochRecord(
            epoch=self.epoch,
            train_loss=round(train_loss, 4),
            dev_loss=round(self.dev_loss(), 4),
            dev_bleu=dev["bleu"],
            dev_chrf=dev["chrf"],
            lr=self.optimizer.param_groups[0]["lr"],
            seconds=round(time.perf_counter() - started, 1),
        )
        self.history.append(row)
        self.snapshot_probes()
        tqdm.write(
            f"epoch {row.epoch}: train loss {row.train_loss:.3f}, dev loss {row.dev_loss:.3f}, "
            f"dev BLEU {row.dev_bleu:.2f}, {row.seconds:.0f} s",
            file=sys.stderr,
        )
        if dev["bleu"] > self.best.dev_bleu:
            state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            self.best = BestEpoch(dev["bleu"], self.epoch, state)
            if on_best:
                on_best()

    def state(self) -> dict[str, Any]:
        """Everything --resume needs (loaded back with torch.load(weights_only=True))."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "epoch": self.epoch,
            "history": [asdict(row) for row in self.history],
            "snapshots": [asdict(snapshot) for snapshot in self.snapshots],
            "best": {"dev_bleu": self.best.dev_bleu, "epoch": self.best.epoch, "state": self.best.state},
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.epoch = state["step"], state["epoch"]
        self.history = [EpochRecord(**row) for row in state["history"]]
        self.snapshots = [
            EpochSnapshots(s["epoch"], [ProbeSnapshot(**probe) for probe in s["probes"]]) for s in state["snapshots"]
        ]
        self.best = BestEpoch(**state["best"])
