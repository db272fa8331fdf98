"""Translate English lines from stdin to Chinese lines on stdout, one line out per line in.

python -m core.translate [--checkpoint PATH] [--beam K] [--trace] [--lens] [--ablate SPEC]

With --trace each output line is one JSON object (DESIGN.md's trace schema). An empty input
line gives an empty output line (with --trace: an empty trace). Notices go to stderr.
--lens (with --trace) adds the decoder's logit lens: per layer and step, the top-k tokens of the
output projection applied to that layer's output (Transformers only).
--ablate enc:1:2,cross:3:4 switches heads off (their context vectors set to zero); a bad SPEC
exits 2 with a message.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from core.explain.lens import LENS_NEEDS_TRANSFORMER, has_lens, lens_json, logit_lens
from core.inference.batch import translate
from core.inference.beam import beam_search_ids
from core.inference.source import EmptyInputError, prepare_source
from core.inference.trace import empty_trace_json, trace
from core.io.checkpoint import CheckpointError, LoadedModel, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.model.intervention import NO_INTERVENTION, Intervention, parse_heads
from core.model.registry import check_heads


def trace_line(
    loaded: LoadedModel, text: str, beam: int, intervention: Intervention = NO_INTERVENTION, lens: bool = False
) -> dict[str, Any]:
    """Greedy trace; with beam > 1, the trace of the beam's output (its tokens forced step by step).
    With lens, the logit lens of the same steps."""
    try:
        forced: list[str] = []
        if beam > 1:
            source = prepare_source(loaded.model, loaded.pipeline, text)
            ids = beam_search_ids(loaded.model, source.ids, beam, intervention=intervention)
            forced = loaded.pipeline.tgt_vocab.decode(ids, strip_specials=False) + ["<eos>"]
        result = trace(
            loaded.model, loaded.pipeline, text, forced=forced, intervention=intervention, keep_layer_states=lens
        )
    except EmptyInputError:
        empty = empty_trace_json(loaded.model, loaded.pipeline, text, intervention)
        return empty | ({"lens": [[] for _ in range(loaded.config.n_dec_layers)]} if lens else {})
    for notice in result.source.notices:
        print(f"notice: {notice}", file=sys.stderr)
    data = result.to_json()
    if lens:
        data["lens"] = lens_json(logit_lens(loaded.model, result, loaded.pipeline.tgt_vocab))
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.translate", description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="checkpoint (default: the shipped one)")
    parser.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--trace", action="store_true", help="write one JSON trace per line instead of the translation")
    parser.add_argument("--lens", action="store_true", help="with --trace: add the logit lens of every decoder layer")
    parser.add_argument(
        "--ablate",
        default="",
        metavar="SPEC",
        help="switch heads off: comma-separated kind:layer:head, kind enc, dec or cross, counted from 1 "
        "(e.g. enc:1:2,cross:3:4)",
    )
    args = parser.parse_args(argv)
    if args.beam < 1:
        parser.error("--beam must be at least 1")
    if args.lens and not args.trace:
        parser.error("--lens adds to the trace: use it with --trace")
    try:
        heads = parse_heads(args.ablate)
    except ValueError as err:
        parser.error(f"--ablate {err}")
    try:
        loaded = load_checkpoint(args.checkpoint)
        check_heads(loaded.config, heads)
    except CheckpointError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: --ablate {err}", file=sys.stderr)
        return 2
    if args.lens and not has_lens(loaded.model):
        print(f"error: --lens: {LENS_NEEDS_TRANSFORMER}", file=sys.stderr)
        return 2
    intervention = Intervention(ablated_heads=heads)
    lines = [line.rstrip("\r\n") for line in sys.stdin]
    if args.trace:
        for line in lines:
            data = trace_line(loaded, line, args.beam, intervention, args.lens)
            print(json.dumps(data, ensure_ascii=False), flush=True)
        return 0
    for result in translate(loaded.model, loaded.pipeline, lines, beam_size=args.beam, intervention=intervention):
        for notice in result.notices:
            if "nothing to translate" not in notice:
                print(f"notice: {notice}", file=sys.stderr)
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
