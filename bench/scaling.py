"""Benchmark 4: how decoding time and the trace's size grow with the length of the sentence.
Sentences of 5..60 tokens are cut from held-out text joined end to end (natural words, unseen)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from statistics import median
from typing import Any

from bench.decoders import greedy
from bench.timing import timed
from core.inference.source import prepare_source
from core.inference.trace import trace
from core.model.transformer import Transformer
from core.text.pipeline import TextPipeline

LENGTHS = (5, 10, 20, 30, 40, 50, 60)


def sentences_of_length(pipeline: TextPipeline, text: Sequence[str], length: int, count: int) -> list[str]:
    """`count` different spans of exactly `length` source tokens (the final <eos> not counted)."""
    words = [w for sentence in text for w in pipeline.source_tokens(sentence)]
    if not words:
        raise ValueError("no held-out text to cut sentences from")
    words *= 1 + length * (count + 1) // len(words)  # a small test split: go round it again
    spans = []
    for start in range(0, len(words) - length, max(1, len(words) // (count + 1))):
        spans.append(" ".join(words[start : start + length]))
        if len(spans) == count:
            break
    return spans


def run(
    model: Transformer, pipeline: TextPipeline, text: Sequence[str], per_length: int, repeats: int
) -> list[dict[str, Any]]:
    rows = []
    for length in LENGTHS:
        samples: dict[str, list[float]] = {"cached": [], "recompute": [], "trace": [], "kb": [], "out": [], "src": []}
        for sentence in sentences_of_length(pipeline, text, length, per_length):
            ids = prepare_source(model, pipeline, sentence).ids
            for name in ("cached", "recompute"):
                samples[name].append(
                    median([timed(lambda n=name, i=ids: greedy(n, model, None, [i]))[1] for _ in range(repeats)])
                )
            samples["trace"].append(
                median([timed(lambda s=sentence: trace(model, pipeline, s))[1] for _ in range(repeats)])
            )
            result = trace(model, pipeline, sentence)
            samples["kb"].append(len(json.dumps(result.to_json())) / 1024)
            samples["out"].append(len(result.steps))
            samples["src"].append(len(ids) - 1)  # without <eos>
        rows.append(
            {
                "source_tokens": median(samples["src"]),
                "output_tokens": median(samples["out"]),
                "cached_ms": median(samples["cached"]),
                "recompute_ms": median(samples["recompute"]),
                "trace_ms": median(samples["trace"]),
                "trace_json_kb": median(samples["kb"]),
                "sentences": len(samples["src"]),
            }
        )
    return rows
