"""Benchmark 2: greedy decoding of held-out sentences by three decoders (bench/decoders.py), at
batch 1, batched, and at a fixed 30-token output length. Each sentence (or batch) is decoded by
the three back to back, in rotating order; per-sentence times are medians over repeats."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import Any

from bench.decoders import DECODERS, greedy
from bench.reference import TorchReference, from_ours
from bench.timing import percentile, timed
from core.inference.source import prepare_source
from core.model.transformer import Transformer
from core.text.pipeline import TextPipeline

FIXED_STEPS = 30  # the goal: cached >= 2x full recompute on 30-token outputs


def _measure(
    model: Transformer,
    reference: TorchReference,
    groups: Sequence[list[list[int]]],
    repeats: int,
    forced_steps: int | None = None,
) -> dict[str, Any]:
    """Decode every group (a batch of source id lists) with each decoder; ms per sentence of each
    group (median over repeats) and the tokens produced."""
    per_sentence_ms: dict[str, list[float]] = {name: [] for name in DECODERS}
    tokens: dict[str, list[list[int]]] = {name: [] for name in DECODERS}
    for index, group in enumerate(groups):
        order = DECODERS[index % 3 :] + DECODERS[: index % 3]
        times: dict[str, list[float]] = {name: [] for name in DECODERS}
        outputs: dict[str, list[list[int]]] = {}
        for _ in range(repeats):
            for name in order:
                outputs[name], ms = timed(
                    lambda name=name, group=group: greedy(name, model, reference, group, forced_steps)
                )
                times[name].append(ms)
        for name in DECODERS:
            per_sentence_ms[name].extend([median(times[name]) / len(group)] * len(group))
            tokens[name].extend(outputs[name])
    return {"ms": per_sentence_ms, "tokens": tokens}


def _rows(label: str, measured: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name in DECODERS:
        ms = measured["ms"][name]
        same = sum(a == b for a, b in zip(measured["tokens"][name], measured["tokens"]["cached"]))
        rows.append(
            {
                "setting": label,
                "decoder": name,
                "sentences_per_s": 1000 * len(ms) / sum(ms),
                "ms_p50": percentile(ms, 50),
                "ms_p90": percentile(ms, 90),
                "same_tokens_as_cached": f"{same}/{len(ms)}",
                "mean_output_tokens": sum(map(len, measured["tokens"][name])) / len(ms),
            }
        )
    return rows


def run(
    model: Transformer,
    pipeline: TextPipeline,
    sentences: Sequence[str],
    repeats: int,
    batch_size: int = 32,
    fixed_count: int = 50,
) -> dict[str, Any]:
    reference = from_ours(model).eval()
    sources = [prepare_source(model, pipeline, s).ids for s in sentences]
    one_by_one = _measure(model, reference, [[s] for s in sources], repeats)
    by_length = sorted(sources, key=len)  # as core.decoding.translate batches them
    batched = _measure(
        model, reference, [by_length[i : i + batch_size] for i in range(0, len(by_length), batch_size)], repeats
    )
    fixed = _measure(model, reference, [[s] for s in sources[:fixed_count]], repeats, FIXED_STEPS)
    speedups = [r / c for r, c in zip(fixed["ms"]["recompute"], fixed["ms"]["cached"])]
    rows = _rows("batch 1", one_by_one) + _rows(f"batch {batch_size}", batched)
    rows += _rows(f"batch 1, {FIXED_STEPS} tokens forced", fixed)
    return {
        "sentences": len(sources),
        "repeats": repeats,
        "rows": rows,
        "fixed_steps": FIXED_STEPS,
        "fixed_sentences": len(fixed["ms"]["cached"]),
        "cached_speedup_over_recompute_30": median(speedups),
        "cached_speedup_over_torch_30": median([t / c for t, c in zip(fixed["ms"]["torch"], fixed["ms"]["cached"])]),
    }
