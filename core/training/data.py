"""Preparing a training run's data: read the pairs, split them by English sentence, build the text
pipeline from the training split, and encode the training pairs as ids."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.io.card import ModelCard
from core.text.data import Pair, ReadReport, Split, file_sha256, group_references, read_pairs, split_by_english
from core.text.pipeline import TextPipeline, build_pipeline
from core.training.config import TrainConfig

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


@dataclass
class PreparedData:
    path: Path
    sha256: str
    report: ReadReport
    limit_pairs: int
    split: Split
    pipeline: TextPipeline
    train_examples: list[Example]
    skipped: int  # over-long training pairs


def prepare_data(
    path: str | Path, config: TrainConfig, limit_pairs: int = 0, say: Callable[[str], None] = lambda _: None
) -> PreparedData:
    """Everything the trainer needs from the data file; `say` reports what was read and kept."""
    pairs, report = read_pairs(path)
    say(f"data: {report.summary()}")
    for example in report.malformed_examples:
        say(f"  malformed {example}")
    if limit_pairs:
        pairs = pairs[:limit_pairs]
    split = split_by_english(pairs, config.dev_size, config.test_size, config.seed)
    pipeline = build_pipeline(split.train, config.zh_tokenizer, config.min_freq)
    examples, skipped = encode_pairs(split.train, pipeline, config)
    say(
        f"split: {split.sizes()}; vocab {len(pipeline.src_vocab)} en / {len(pipeline.tgt_vocab)} zh; "
        f"{skipped} over-long training pairs skipped"
    )
    return PreparedData(Path(path), file_sha256(path), report, limit_pairs, split, pipeline, examples, skipped)


def card_split(pairs: Sequence[Pair], card: ModelCard) -> Split:
    """The split a checkpoint was trained on, re-created from the same file: its --limit-pairs,
    dev and test sizes and seed, as its card records them; ValueError when it records none."""
    config = card.train_config
    if not {"dev_size", "test_size", "seed"} <= set(config):
        raise ValueError("the checkpoint's card records no split; use --split all")
    limit = card.data.limit_pairs if card.data and card.data.limit_pairs else 0
    return split_by_english(pairs[:limit] if limit else pairs, config["dev_size"], config["test_size"], config["seed"])


def recorded_split(path: str | Path, card: ModelCard, split: str) -> tuple[list[str], list[list[str]], ReadReport]:
    """The English sentences of one split ("all", "train", "dev" or "test") and all their references."""
    pairs, report = read_pairs(path)
    if split != "all":
        pairs = getattr(card_split(pairs, card), split)
    sources, references = group_references(pairs)
    return sources, references, report
