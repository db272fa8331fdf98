"""Markdown table comparing checkpoints trained with different Chinese target units (on dev).

python scripts/target_units_table.py --data ../shared/data/cmn.txt runs/sweep-*.safetensors
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.io.checkpoint import load_checkpoint  # noqa: E402
from core.text.data import read_pairs, split_by_english  # noqa: E402
from core.text.vocab import UNK_ID  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("checkpoints", nargs="+")
    args = parser.parse_args()
    pairs, _ = read_pairs(args.data)
    print(
        "| target units | dev BLEU | dev chrF | target vocab | target `<unk>` rate (dev refs) | epochs | training minutes |"
    )
    print("|---|---|---|---|---|---|---|")
    for path in args.checkpoints:
        loaded = load_checkpoint(path)
        card, pipeline = loaded.card, loaded.pipeline
        tc = card["train_config"]
        dev = split_by_english(pairs, tc["dev_size"], tc["test_size"], tc["seed"]).dev
        ids = [i for p in dev for i in pipeline.tgt_vocab.encode(pipeline.target_tokens(p.zh))]
        unk_rate = sum(i == UNK_ID for i in ids) / len(ids)
        best = card["history"][card["best_epoch"] - 1]
        print(
            f"| {pipeline.zh_tokenizer} | {best['dev_bleu']:.2f} | {best['dev_chrf']:.2f} | {len(pipeline.tgt_vocab)} | {unk_rate:.2%} | {len(card['history'])} | {card['training_minutes']} |"
        )


if __name__ == "__main__":
    main()
