"""Small data the project writes itself, so tests never need cmn.txt (which is never committed)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import torch

from core.io.paths import ROOT
from core.model.base import Seq2Seq
from core.model.config import ModelConfig
from core.model.registry import build_model
from core.text.batches import iterate_batches
from core.text.data import Pair
from core.text.pipeline import TextPipeline, build_pipeline
from core.text.vocab import PAD_ID
from core.training.config import TrainConfig
from core.training.data import encode_pairs

REAL_DATA = ROOT.parent / "shared" / "data" / "cmn.txt"  # used when present, never committed

SUBJECTS = [
    ("I", "我", "like", "see"),
    ("You", "你", "like", "see"),
    ("Tom", "汤姆", "likes", "sees"),
    ("Mary", "玛丽", "likes", "sees"),
    ("We", "我们", "like", "see"),
    ("They", "他们", "like", "see"),
]
VERBS = [("like", "喜欢"), ("see", "看见")]
OBJECTS = [
    ("tea", "茶"),
    ("books", "书"),
    ("the cat", "猫"),
    ("music", "音乐"),
    ("apples", "苹果"),
    ("the river", "河"),
]


def synthetic_pairs() -> list[Pair]:
    """72 made-up sentence pairs with a regular grammar ("Tom likes tea." -> "汤姆喜欢茶。")."""
    pairs = []
    for (en_s, zh_s, likes, sees), (verb, zh_v), (en_o, zh_o) in itertools.product(SUBJECTS, VERBS, OBJECTS):
        en_v = likes if verb == "like" else sees
        pairs.append(Pair(f"{en_s} {en_v} {en_o}.", f"{zh_s}{zh_v}{zh_o}。"))
    return pairs


def write_pairs(path: Path, pairs: list[Pair], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [f"{p.en}\t{p.zh}\tCC-BY 2.0 (France) Attribution: fixture written by the tests" for p in pairs]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n", encoding="utf-8")
    return path


# A tiny model trained by core.train itself in seconds (the training CLI's arguments, written once).
TINY_TRAIN_OPTIONS = (
    "--dev-size 4 --test-size 4 --d-model 32 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 "
    "--d-ff 64 --max-tokens 300 --warmup-steps 10 --lr 3e-3 --min-freq 1"
).split()


def tiny_train_args(data: Path, out: Path, epochs: int = 3, *extra: str) -> list[str]:
    """python -m core.train arguments for the tiny model on `data`, writing `out`."""
    return ["--data", str(data), "--out", str(out), "--epochs", str(epochs), *TINY_TRAIN_OPTIONS, *extra]


def tiny_config(pipeline: TextPipeline, **overrides) -> ModelConfig:
    settings = dict(d_model=32, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=64, dropout=0.0, max_len=64)
    settings.update(overrides)
    return ModelConfig(len(pipeline.src_vocab), len(pipeline.tgt_vocab), **settings)


def train_tiny(
    pairs: list[Pair], steps: int = 300, seed: int = 0, lr: float = 3e-3, **overrides
) -> tuple[Seq2Seq, TextPipeline]:
    """Fit a tiny model to `pairs` (memorisation) with plain Adam; a few seconds on CPU.
    `overrides` go to the config (arch="rnn" gives the GRU model)."""
    torch.manual_seed(seed)
    pipeline = build_pipeline(pairs, "char", min_freq=1)
    model = build_model(tiny_config(pipeline, **overrides))
    examples, _ = encode_pairs(pairs, pipeline, TrainConfig())
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = torch.nn.CrossEntropyLoss(ignore_index=PAD_ID)
    rng = random.Random(seed)
    model.train()
    step = 0
    while step < steps:
        for src, tgt in iterate_batches(examples, 400, rng):
            logits = model(src, tgt[:, :-1]).logits
            loss = criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
    return model.eval(), pipeline
