#!/usr/bin/env bash
# Compare Chinese target units at an equal, short budget (4 epochs each) on the dev split.
# Usage: bash scripts/sweep_targets.sh ../shared/data/cmn.txt runs/
set -euo pipefail
data=${1:?path to cmn.txt}
out=${2:-runs}
mkdir -p "$out"
for units in char jieba jieba_backoff; do
  python -m core.train --data "$data" --out "$out/sweep-$units.safetensors" \
    --zh-tokenizer "$units" --epochs 4 --max-tokens 3000 --warmup-steps 400 2> "$out/sweep-$units.log"
done
