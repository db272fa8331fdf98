"""Training: label smoothing, AdamW with warmup + cosine decay, clipping, length-bucketed batches.

python -m core.train --data ../shared/data/cmn.txt --out model.safetensors [options]

Each epoch reports dev loss and dev BLEU, keeps the best checkpoint (by dev BLEU), snapshots the
cross-attention of a few probe sentences into the card, and saves a resume state next to --out.
Ctrl-C stops cleanly: the best checkpoint so far stays usable, and --resume continues.
Data-parallel on N processes: torchrun --nproc_per_node N -m core.train ... (core/distributed.py).
"""

from __future__ import annotations

import argparse
import math
import random
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from core.architectures import Seq2Seq, build_model
from core.checkpoint import save_checkpoint
from core.config import ARCHS, ZH_TOKENIZERS, ModelConfig, TrainConfig
from core.data import Pair, bucket_batches, file_sha256, group_references, iterate_batches, read_pairs, split_by_english
from core.decoding import trace, translate
from core.distributed import SINGLE_PROCESS, Workers, start, stop
from core.evaluate import score
from core.text import PAD_ID, TextPipeline
from core.vocab_build import build_pipeline

PROBE_SENTENCES = ("I like to read books.", "Tom is taller than Mary.", "Where is the train station?")

Callback = Callable[["Trainer", dict[str, Any]], None]


Example = tuple[list[int], list[int]]  # (source ids ending in <eos>, <bos> target ids <eos>)


def encode_pairs(pairs: Sequence[Pair], pipeline: TextPipeline, config: TrainConfig) -> tuple[list[Example], int]:
    """(source ids, target ids) for training; pairs longer than the configured limits are skipped and counted."""
    examples, skipped = [], 0
    for pair in pairs:
        src, tgt = pipeline.source_tokens(pair.en), pipeline.target_tokens(pair.zh)
        if not src or not tgt or len(src) > config.max_src_len or len(tgt) > config.max_tgt_len:
            skipped += 1
            continue
        examples.append((pipeline.source_ids(src), pipeline.target_ids(tgt)))
    return examples, skipped


def warmup_cosine(step: int, warmup: int, total: int, floor: float = 0.05) -> float:
    """LR multiplier: linear warmup to 1, then cosine decay to `floor`."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


class Trainer:
    """Owns the model, optimizer and loop. Callbacks (minGPT style) receive progress events:
    'on_batch_end' {step, loss, lr, tokens_per_s} and 'on_epoch_end' {the history row}."""

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
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed" not in n]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or "embed" in n]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=config.lr,
            betas=(0.9, 0.98),
            eps=1e-9,
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
        self.history: list[dict[str, Any]] = []
        self.snapshots: list[dict[str, Any]] = []
        self.best: dict[str, Any] = {"dev_bleu": -1.0, "epoch": 0, "state": None}
        self.callbacks: dict[str, list[Callback]] = defaultdict(list)

    def add_callback(self, event: str, callback: Callback) -> None:
        self.callbacks[event].append(callback)

    def _emit(self, event: str, info: dict[str, Any]) -> None:
        for callback in self.callbacks[event]:
            callback(self, info)

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
            self._emit("on_batch_end", {"step": self.step, "loss": batch_loss, "lr": lr, "tokens_per_s": tokens_per_s})
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
                {
                    "source_tokens": t.source.tokens,
                    "decoder_tokens": t.decoder_tokens,
                    "cross": [[round(x, 3) for x in row] for row in cross.tolist()],
                }
            )
        self.snapshots.append({"epoch": self.epoch, "probes": items})

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
        row = {
            "epoch": self.epoch,
            "train_loss": round(train_loss, 4),
            "dev_loss": round(self.dev_loss(), 4),
            "dev_bleu": dev["bleu"],
            "dev_chrf": dev["chrf"],
            "lr": self.optimizer.param_groups[0]["lr"],
            "seconds": round(time.perf_counter() - started, 1),
        }
        self.history.append(row)
        self.snapshot_probes()
        tqdm.write(
            f"epoch {row['epoch']}: train loss {row['train_loss']:.3f}, dev loss {row['dev_loss']:.3f}, dev BLEU {row['dev_bleu']:.2f}, {row['seconds']:.0f} s",
            file=sys.stderr,
        )
        if dev["bleu"] > self.best["dev_bleu"]:
            self.best = {
                "dev_bleu": dev["bleu"],
                "epoch": self.epoch,
                "state": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            }
            if on_best:
                on_best()
        self._emit("on_epoch_end", row)

    def state(self) -> dict[str, Any]:
        """Everything --resume needs (loaded back with torch.load(weights_only=True))."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "epoch": self.epoch,
            "history": self.history,
            "snapshots": self.snapshots,
            "best": self.best,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step, self.epoch = state["step"], state["epoch"]
        self.history, self.snapshots, self.best = state["history"], state["snapshots"], state["best"]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m core.train", description="Train an English->Chinese model.")
    parser.add_argument("--data", required=True, help="tab-separated English/Chinese pairs (cmn.txt format)")
    parser.add_argument("--out", required=True, help="checkpoint to write (.safetensors, or .pt)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, ...")
    parser.add_argument("--resume", action="store_true", help="continue from OUT.state.pt written by an earlier run")
    parser.add_argument(
        "--limit-pairs", type=int, default=0, help="use only the first N pairs of the file (quick experiments, tests)"
    )
    parser.add_argument(
        "--full-precision", action="store_true", help="store float32 tensors (default float16, half the size)"
    )
    parser.add_argument(
        "--arch",
        choices=ARCHS,
        default="transformer",
        help="transformer, or rnn: GRU encoder-decoder with Bahdanau attention (--n-heads is then 1)",
    )
    model_defaults = ModelConfig(0, 0)
    for name in ("d_model", "n_heads", "n_enc_layers", "n_dec_layers", "d_ff", "max_len"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(model_defaults, name))
    parser.add_argument("--dropout", type=float, default=model_defaults.dropout)
    parser.add_argument("--pre-ln", action="store_true", help="pre-LayerNorm residual blocks (default post-LN)")
    parser.add_argument(
        "--no-tie", action="store_true", help="separate output projection instead of the tied target embedding"
    )
    train_defaults = TrainConfig()
    for name, value in asdict(train_defaults).items():
        option = "--" + name.replace("_", "-")
        if name == "zh_tokenizer":
            parser.add_argument(option, choices=ZH_TOKENIZERS, default=value, help="Chinese target units")
        else:
            parser.add_argument(option, type=type(value), default=value)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    workers, device = start(args.device)
    try:
        return run(args, argv, workers, device)
    finally:
        stop(workers)


def run(args: argparse.Namespace, argv: list[str], workers: Workers, device: torch.device) -> int:
    """The whole training run. Under torchrun every process runs this; only the main one
    (rank 0) prints, evaluates and writes the checkpoint."""
    started = time.perf_counter()
    train_config = TrainConfig(**{k: getattr(args, k) for k in asdict(TrainConfig())})
    torch.manual_seed(train_config.seed)  # same seed everywhere: every process builds the same model
    random.seed(train_config.seed)
    say = partial(print, file=sys.stderr) if workers.is_main else (lambda *_, **__: None)

    pairs, report = read_pairs(args.data)
    say(f"data: {report.summary()}")
    for example in report.malformed_examples:
        say(f"  malformed {example}")
    if args.limit_pairs:
        pairs = pairs[: args.limit_pairs]
    split = split_by_english(pairs, train_config.dev_size, train_config.test_size, train_config.seed)
    pipeline = build_pipeline(split.train, train_config.zh_tokenizer, train_config.min_freq)
    train_examples, skipped = encode_pairs(split.train, pipeline, train_config)
    say(
        f"split: {split.sizes()}; vocab {len(pipeline.src_vocab)} en / {len(pipeline.tgt_vocab)} zh; {skipped} over-long training pairs skipped"
    )

    model_config = ModelConfig(
        src_vocab_size=len(pipeline.src_vocab),
        tgt_vocab_size=len(pipeline.tgt_vocab),
        d_model=args.d_model,
        n_heads=1 if args.arch == "rnn" else args.n_heads,
        n_enc_layers=args.n_enc_layers,
        n_dec_layers=args.n_dec_layers,
        d_ff=args.d_ff,
        dropout=args.dropout,
        max_len=args.max_len,
        norm_first=args.pre_ln,
        tie_embeddings=not args.no_tie,
        arch=args.arch,
    )
    trainer = Trainer(build_model(model_config), pipeline, train_config, train_examples, split.dev, device, workers)
    out = Path(args.out)
    state_path = out.with_name(out.name + ".state.pt")
    if args.resume:
        trainer.load_state(torch.load(state_path, map_location=device, weights_only=True))
        say(f"resumed from {state_path} after epoch {trainer.epoch}")

    card = {
        "command": "python -m core.train " + shlex.join(argv),
        "model_config": model_config.to_dict(),
        "train_config": train_config.to_dict(),
        "data": {
            "file": Path(args.data).name,
            "sha256": file_sha256(args.data),
            "pairs": report.pairs,
            "malformed_lines": report.malformed,
            "limit_pairs": args.limit_pairs,
        },
        "split": split.sizes(),
        "skipped_long_pairs": skipped,
        "vocab": {
            "src": len(pipeline.src_vocab),
            "tgt": len(pipeline.tgt_vocab),
            "tgt_tokenizer": pipeline.zh_tokenizer,
        },
        "torch": torch.__version__,
        "device": str(device),
        "processes": workers.world_size,
    }
    half = not args.full_precision

    def write(weights: dict[str, torch.Tensor] | None = None, **extra: Any) -> None:
        model = build_model(model_config)
        model.load_state_dict(weights if weights is not None else trainer.model.state_dict())
        full_card = {
            **card,
            "history": trainer.history,
            "best_epoch": trainer.best["epoch"],
            "attention_snapshots": {"probes": list(PROBE_SENTENCES), "epochs": trainer.snapshots},
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "training_minutes": round((time.perf_counter() - started) / 60, 1),
            **extra,
        }
        save_checkpoint(out, model, pipeline, full_card, half=half)
        torch.save(trainer.state(), state_path)

    deadline = started + train_config.max_minutes * 60 if train_config.max_minutes else None
    try:
        trainer.fit(deadline, on_best=lambda: write(trainer.best["state"]))
    except KeyboardInterrupt:
        say("\ninterrupted: keeping the best checkpoint so far")
        if not workers.is_main:
            return 130
        if trainer.best["state"] is None:
            write(status="interrupted before the first epoch ended")
            return 130
    if not workers.is_main:
        return 0
    if trainer.best["state"] is not None:
        trainer.model.load_state_dict(trainer.best["state"])
    test_sources, test_references = group_references(split.test)
    test = trainer.evaluate(test_sources, test_references) if test_sources else {}
    test.update(
        {"sentences": len(test_sources), "references": sum(len(r) for r in test_references), "decoding": "greedy"}
    )
    write(trainer.best["state"], test=test)
    say(f"test: {test}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
