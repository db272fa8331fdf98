"""Analyses of a checkpoint over a corpus.

python -m core.analyze heads --checkpoint P --data PATH [--split dev] [--sentences N] --out FILE.json
python -m core.analyze attribution --checkpoint P --data PATH [--split dev] [--sentences N] --out FILE.json

`heads` writes the head atlas (docs/heads.md has its schema): every head's confidence, entropy,
roles, the BLEU/chrF change when it alone is switched off, the pruning curve, and how well each
cross-attention head aligns with CC-CEDICT links. It prints the headline findings.

`attribution` writes the agreement table (docs/explain.md): how often each explanation method's top
source word for an output word is a CC-CEDICT link, and how the methods rank-correlate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from core.explain.agreement import agreement
from core.explain.atlas_view import shipped_atlas
from core.explain.heads import head_atlas, summarize
from core.io.checkpoint import CheckpointError, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.model.intervention import parse_heads
from core.training.data import recorded_split


def _corpus_arguments(command: argparse.ArgumentParser, sentences: int) -> None:
    command.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="default: the shipped model")
    command.add_argument("--data", required=True, help="tab-separated English/Chinese pairs (cmn.txt format)")
    command.add_argument(
        "--split", choices=["all", "train", "dev", "test"], default="dev", help="re-created from the card"
    )
    command.add_argument("--sentences", type=int, default=sentences, help="the first N English sentences of the split")
    command.add_argument("--out", required=True, help="the JSON to write")


def _progress_bars() -> tuple[dict[str, tqdm], Callable[[str, int, int], None]]:
    bars: dict[str, tqdm] = {}

    def progress(what: str, done: int, total: int) -> None:
        if what not in bars:
            bars[what] = tqdm(total=total, desc=what, file=sys.stderr, leave=False)
        bars[what].update(done - bars[what].n)

    return bars, progress


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.analyze", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    _corpus_arguments(commands.add_parser("heads", help="the head atlas"), 500)
    _corpus_arguments(commands.add_parser("attribution", help="the explanation methods' agreement table"), 300)
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
    bars, progress = _progress_bars()
    started = time.perf_counter()
    describe = {
        "model": {"file": Path(args.checkpoint).name, "sha256": loaded.sha256, "arch": loaded.config.arch},
        "split": args.split,
    }
    if args.command == "heads":
        result = head_atlas(loaded.model, loaded.pipeline, sources, references, describe, progress)
    else:
        atlas = shipped_atlas(loaded.sha256)
        head = (summarize(atlas)["alignment_head"] if atlas else None) or ""
        aligned = next(iter(parse_heads(head)), None)
        report = lambda done, total: progress("sentences", done, total)  # noqa: E731
        result = describe | agreement(loaded.model, loaded.pipeline, sources, aligned, report)
    for bar in bars.values():
        bar.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    headline = summarize(result) if args.command == "heads" else {"methods": result["methods"]}
    print(json.dumps({**headline, "seconds": result["seconds"], "out": args.out}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
