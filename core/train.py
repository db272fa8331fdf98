"""Train an English->Chinese model and write its checkpoint with a card.

python -m core.train --data ../shared/data/cmn.txt --out model.safetensors [options]

Each epoch reports dev loss and dev BLEU, keeps the best checkpoint (by dev BLEU), snapshots the
cross-attention of a few probe sentences into the card, and saves a resume state next to --out.
Ctrl-C stops cleanly: the best checkpoint so far stays usable, and --resume continues.
Data-parallel on N processes: torchrun --nproc_per_node N -m core.train ... (core/training/distributed.py).
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path

import torch

from core.io.card import DataInfo, HeldOutScores, ModelCard, SplitSize, SplitSizes, VocabInfo
from core.model.config import ModelConfig
from core.model.registry import ARCHITECTURES, build_model, spec_for
from core.text.data import group_references
from core.text.tokenize import ZH_TOKENIZERS
from core.training.config import TrainConfig
from core.training.data import PreparedData, prepare_data
from core.training.distributed import Workers, start, stop
from core.training.saving import RunWriter
from core.training.trainer import Trainer

MODEL_INT_OPTIONS = ("d_model", "n_heads", "n_enc_layers", "n_dec_layers", "d_ff", "max_len")


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
        choices=list(ARCHITECTURES),
        default="transformer",
        help="transformer, or rnn: GRU encoder-decoder with Bahdanau attention (--n-heads is then 1)",
    )
    model_defaults = ModelConfig(0, 0)
    for name in MODEL_INT_OPTIONS:
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(model_defaults, name))
    parser.add_argument("--dropout", type=float, default=model_defaults.dropout)
    parser.add_argument("--pre-ln", action="store_true", help="pre-LayerNorm residual blocks (default post-LN)")
    parser.add_argument(
        "--no-tie", action="store_true", help="separate output projection instead of the tied target embedding"
    )
    for name, value in asdict(TrainConfig()).items():
        option = "--" + name.replace("_", "-")
        if name == "zh_tokenizer":
            parser.add_argument(option, choices=ZH_TOKENIZERS, default=value, help="Chinese target units")
        else:
            parser.add_argument(option, type=type(value), default=value)
    return parser.parse_args(argv)


def model_config_from_args(args: argparse.Namespace, data: PreparedData) -> ModelConfig:
    """The options, the vocabulary sizes, and whatever the architecture fixes (the GRU: one head)."""
    options = {name: getattr(args, name) for name in MODEL_INT_OPTIONS}
    options.update(spec_for(args.arch).fixed_config)
    return ModelConfig(
        src_vocab_size=len(data.pipeline.src_vocab),
        tgt_vocab_size=len(data.pipeline.tgt_vocab),
        dropout=args.dropout,
        norm_first=args.pre_ln,
        tie_embeddings=not args.no_tie,
        arch=args.arch,
        **options,
    )


def initial_card(
    argv: Sequence[str],
    model_config: ModelConfig,
    train_config: TrainConfig,
    data: PreparedData,
    device: torch.device,
    workers: Workers,
) -> ModelCard:
    """What the card knows before the first epoch: how to reproduce the run, on which data."""
    sizes = data.split.sizes()
    return ModelCard(
        command="python -m core.train " + shlex.join(argv),
        model_config=model_config.to_dict(),
        train_config=train_config.to_dict(),
        data=DataInfo(
            file=data.path.name,
            sha256=data.sha256,
            pairs=data.report.pairs,
            malformed_lines=data.report.malformed,
            limit_pairs=data.limit_pairs,
        ),
        split=SplitSizes(**{name: SplitSize(**size) for name, size in sizes.items()}),
        skipped_long_pairs=data.skipped,
        vocab=VocabInfo(len(data.pipeline.src_vocab), len(data.pipeline.tgt_vocab), data.pipeline.zh_tokenizer),
        torch=torch.__version__,
        device=str(device),
        processes=workers.world_size,
    )


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
    data = prepare_data(args.data, train_config, args.limit_pairs, say)
    model_config = model_config_from_args(args, data)
    model = build_model(model_config)
    trainer = Trainer(model, data.pipeline, train_config, data.train_examples, data.split.dev, device, workers)
    card = initial_card(argv, model_config, train_config, data, device, workers)
    writer = RunWriter(Path(args.out), model_config, card, half=not args.full_precision, started=started)
    if args.resume:
        trainer.load_state(torch.load(writer.state_path, map_location=device, weights_only=True))
        say(f"resumed from {writer.state_path} after epoch {trainer.epoch}")

    deadline = started + train_config.max_minutes * 60 if train_config.max_minutes else None
    try:
        trainer.fit(deadline, on_best=lambda: writer.write(trainer, trainer.best.state))
    except KeyboardInterrupt:
        say("\ninterrupted: keeping the best checkpoint so far")
        if not workers.is_main:
            return 130
        if trainer.best.state is None:
            writer.write(trainer, status="interrupted before the first epoch ended")
            return 130
    if not workers.is_main:
        return 0
    if trainer.best.state is not None:
        trainer.model.load_state_dict(trainer.best.state)
    test = held_out_scores(trainer, data)
    writer.write(trainer, trainer.best.state, test=test)
    say(f"test: {asdict(test)}; wrote {args.out}")
    return 0


def held_out_scores(trainer: Trainer, data: PreparedData) -> HeldOutScores:
    """The best model on the held-out test split, greedy, measured once when training ends."""
    sources, references = group_references(data.split.test)
    scores = trainer.evaluate(sources, references) if sources else {}
    return HeldOutScores(
        bleu=scores.get("bleu"),
        chrf=scores.get("chrf"),
        sentences=len(sources),
        references=sum(len(r) for r in references),
        decoding="greedy",
    )


if __name__ == "__main__":
    sys.exit(main())
