"""Analyses of a checkpoint over a corpus.

python -m core.analyze heads --checkpoint P --data PATH [--split dev] [--sentences N] --out FILE.json

`heads` writes the head atlas (docs/heads.md has its schema): every head's confidence, entropy,
roles, the BLEU/chrF change when it alone is switched off, the pruning curve, and how well each
cross-attention head aligns with CC-CEDICT links. It prints the headline findings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from core.explain.heads import head_atlas, summarize
from core.io.checkpoint import CheckpointError, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.training.data import recorded_split


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.analyze", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    heads = commands.add_parser("heads", help="the head atlas")
    heads.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="default: the shipped model")
    heads.add_argument("--data", required=True, help="tab-separated English/Chinese pairs (cmn.txt format)")
    heads.add_argument(
        "--split", choices=["all", "train", "dev", "test"], default="dev", help="re-created from the card"
    )
    heads.add_argument("--sentences", type=int, default=500, help="the first N English sentences of the split")
    heads.add_argument("--out", required=True, help="the atlas JSON to write")
    args = parser.parse_args(argv)
    if args.sentences < 1:
        parser.error("--sentences must be at least 1")
    try:
        loaded = load_checkpoint(args.checkpoint)
        sources, references, _ = recorded_split(args.data, loaded.model_card, args.split)
    except (CheckpointError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    sources, references = sources[: args.sentences], references[: args.sentences]
    if not sources:
        print("error: no sentence pairs in that split", file=sys.stderr)
        return 2
    bars: dict[str, tqdm] = {}

    def progress(what: str, done: int, total: int) -> None:
        if what not in bars:
            bars[what] = tqdm(total=total, desc=what, file=sys.stderr, leave=False)
        bars[what].update(done - bars[what].n)

    started = time.perf_counter()
    describe = {
        "model": {"file": Path(args.checkpoint).name, "sha256": loaded.sha256, "arch": loaded.config.arch},
        "split": args.split,
    }
    atlas = head_atlas(loaded.model, loaded.pipeline, sources, references, describe, progress)
    for bar in bars.values():
        bar.close()
    atlas["seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(atlas, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({**summarize(atlas), "seconds": atlas["seconds"], "out": args.out}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
