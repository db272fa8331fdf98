"""BLEU and chrF of a checkpoint on a data file (sacrebleu, tokenize="zh", multi-reference).

python -m core.evaluate --checkpoint PATH --data PATH [--split all|train|dev|test] [--beam K]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from core.inference.batch import translate
from core.io.checkpoint import CheckpointError, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.training.data import recorded_split
from core.training.scoring import score


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint", default=str(DEFAULT_CHECKPOINT), help="checkpoint to score (default: the shipped one)"
    )
    parser.add_argument("--data", required=True, help="tab-separated English/Chinese pairs (cmn.txt format)")
    parser.add_argument(
        "--split",
        choices=["all", "train", "dev", "test"],
        default="all",
        help="'all' scores every pair in the file; train/dev/test re-create the split recorded in the checkpoint's card",
    )
    parser.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--limit", type=int, default=0, help="score only the first N English sentences (0 = all)")
    args = parser.parse_args(argv)
    try:
        loaded = load_checkpoint(args.checkpoint)
    except CheckpointError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        sources, references, report = recorded_split(args.data, loaded.model_card, args.split)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.limit:
        sources, references = sources[: args.limit], references[: args.limit]
    if not sources:
        print("error: no sentence pairs to score", file=sys.stderr)
        return 2
    start = time.perf_counter()
    hypotheses = [t.text for t in translate(loaded.model, loaded.pipeline, sources, beam_size=args.beam)]
    result = {
        **score(hypotheses, references),
        "sentences": len(sources),
        "references": sum(len(r) for r in references),
        "split": args.split,
        "beam": args.beam,
        "malformed_lines": report.malformed,
        "seconds": round(time.perf_counter() - start, 1),
        "checkpoint": str(args.checkpoint),
    }
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
