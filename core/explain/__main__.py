"""What each output token draws on, one JSON line per English line.

python -m core.explain --method attention|norm|rollout|grad_x_input|ig [--checkpoint P]
    [--attention mean|last|cross:L:H] [--ig-steps 50] [--ablate SPEC]

The model translates each line greedily; each output line is
{"source_tokens", "decoder_tokens", "target_tokens", "method", "source": [T][S], "prefix": [T][T] or null,
 "delta": [T] or null}: row t is the step that produced target_tokens[t] (having read
decoder_tokens[:t+1]). For ig, delta[t] = f(input) − f(baseline) of that step's log-probability,
so Σ source[t] + Σ prefix[t] ≈ delta[t] (completeness) can be checked from outside.
docs/explain.md defines every method. An empty line gives empty lists; notices go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from core.explain.attention_flow import AttentionChoice
from core.explain.attribution import METHODS, explain, unsupported
from core.inference.source import EmptyInputError
from core.inference.trace import trace
from core.io.checkpoint import CheckpointError, LoadedModel, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.model.intervention import Intervention, parse_heads
from core.model.registry import check_heads

# More integration points than the app's 20: the command line is where numbers are checked and
# compared, and speed matters less (a 10-word sentence ~1 s more); docs/explain.md has the gaps.
CLI_IG_STEPS = 50


def attention_choice(text: str) -> AttentionChoice:
    """'mean', 'last' or one cross-attention head 'cross:L:H' (1-based)."""
    if text in ("mean", "last"):
        return AttentionChoice(text)
    heads = parse_heads(text)
    if len(heads) != 1:
        raise ValueError(f"{text!r}: expected mean, last or one head cross:layer:head")
    return AttentionChoice("head", next(iter(heads)))


def explain_line(
    loaded: LoadedModel, text: str, method: str, choice: AttentionChoice, ig_steps: int, intervention: Intervention
) -> dict[str, Any]:
    try:
        result = trace(loaded.model, loaded.pipeline, text, intervention=intervention)
    except EmptyInputError:
        has_prefix = method in ("rollout", "grad_x_input", "ig")
        return {
            "source_tokens": [],
            "decoder_tokens": [],
            "target_tokens": [],
            "method": method,
            "source": [],
            "prefix": [] if has_prefix else None,
            "delta": [] if method == "ig" else None,
        }
    for notice in result.source.notices:
        print(f"notice: {notice}", file=sys.stderr)
    vocab = loaded.pipeline.tgt_vocab
    return explain(loaded.model, result, vocab, method, intervention, choice, ig_steps).to_json(result)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.explain", description=__doc__.splitlines()[0])
    parser.add_argument("--method", required=True, choices=list(METHODS), help="the explanation method")
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="checkpoint (default: the shipped one)")
    parser.add_argument(
        "--attention",
        default="mean",
        metavar="VIEW",
        help="for --method attention: mean (of all layers and heads, the default), last (layer), or cross:L:H",
    )
    parser.add_argument(
        "--ig-steps", type=int, default=CLI_IG_STEPS, help=f"IG's integration points (default {CLI_IG_STEPS})"
    )
    parser.add_argument("--ablate", default="", metavar="SPEC", help="switch heads off first (as core.translate)")
    args = parser.parse_args(argv)
    if args.ig_steps < 2:
        parser.error("--ig-steps must be at least 2")
    try:
        choice = attention_choice(args.attention)
        heads = parse_heads(args.ablate)
    except ValueError as err:
        parser.error(str(err))
    try:
        loaded = load_checkpoint(args.checkpoint)
        check_heads(loaded.config, heads | ({choice.head} if choice.head else set()))
        reason = unsupported(loaded.model, args.method)
    except (CheckpointError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    intervention = Intervention(ablated_heads=heads)
    for line in sys.stdin:
        result = explain_line(loaded, line.rstrip("\r\n"), args.method, choice, args.ig_steps, intervention)
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
