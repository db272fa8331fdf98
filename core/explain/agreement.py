"""Which explanation aligns best? Over a corpus, each method's top source word for every output
word is scored against the CC-CEDICT reference links of core.explain.alignment (precision,
recall, AER), and the methods are compared with each other by rank correlation (Spearman's ρ
between their source relevance vectors, averaged over output tokens). Integrated gradients'
completeness gap and the source share of every step are summarised on the way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.explain.alignment import AlignmentCounts, reference_links, score_attention
from core.explain.attention_flow import AttentionChoice
from core.explain.attribution import LOW_SOURCE_SHARE, explain, source_share, unsupported
from core.explain.gradients import completeness_gap
from core.inference.trace import trace
from core.model.base import Seq2Seq
from core.model.intervention import HeadRef
from core.text.pipeline import TextPipeline

Progress = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True)
class Variant:
    """One row of the table: a method (and, for attention, which weights)."""

    name: str
    method: str
    attention: AttentionChoice = AttentionChoice()


def variants(model: Seq2Seq, alignment_head: HeadRef | None = None) -> list[Variant]:
    rows = [Variant("attention (mean of layers and heads)", "attention")]
    if hasattr(model, "decoder_layers"):
        rows.append(Variant("attention (last layer)", "attention", AttentionChoice("last")))
    if alignment_head is not None:
        rows.append(
            Variant(
                f"attention ({alignment_head.spec()}, the atlas's alignment head)",
                "attention",
                AttentionChoice("head", alignment_head),
            )
        )
    names = {
        "norm": "norm-based attention",
        "rollout": "attention rollout",
        "grad_x_input": "gradient × input",
        "ig": "integrated gradients",
    }
    rows += [Variant(name, method) for method, name in names.items() if unsupported(model, method) is None]
    return rows


def _ranks(matrix: np.ndarray) -> np.ndarray:
    return pd.DataFrame(matrix).rank(axis=1).to_numpy()


def _row_correlations(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Spearman's ρ of each row pair (rows with no spread are skipped)."""
    ranks_a, ranks_b = _ranks(a), _ranks(b)
    out = []
    for x, y in zip(ranks_a, ranks_b):
        if x.std() > 0 and y.std() > 0:
            out.append(float(np.corrcoef(x, y)[0, 1]))
    return out


@dataclass
class _Sums:
    counts: dict[str, AlignmentCounts] = field(default_factory=dict)
    correlations: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    gaps: list[float] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)


def agreement(
    model: Seq2Seq,
    pipeline: TextPipeline,
    sources: Sequence[str],
    alignment_head: HeadRef | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The agreement table over `sources` (English sentences; each is translated greedily)."""
    rows = variants(model, alignment_head)
    sums = _Sums({row.name: AlignmentCounts() for row in rows})
    vocab = pipeline.tgt_vocab
    used = 0
    for done, text in enumerate(sources, 1):
        if not pipeline.source_tokens(text):
            continue
        used += 1
        result = trace(model, pipeline, text)
        links = reference_links([step.token for step in result.steps], result.source.tokens)
        matrices = {}
        for row in rows:
            attribution = explain(model, result, vocab, row.method, attention=row.attention)
            matrices[row.name] = attribution.source
            sums.counts[row.name].add(score_attention(links, attribution.source))
            if row.method == "ig":
                sums.gaps.append(completeness_gap(attribution.source, attribution.prefix, attribution.delta))
                sums.shares += source_share(attribution).tolist()
        for i, first in enumerate(rows):
            for second in rows[i + 1 :]:
                pair = (first.name, second.name)
                sums.correlations.setdefault(pair, []).extend(_row_correlations(matrices[pair[0]], matrices[pair[1]]))
        if progress:
            progress(done, len(sources))
    return _table(rows, sums, used)


def _table(rows: list[Variant], sums: _Sums, sentences: int) -> dict[str, Any]:
    names = [row.name for row in rows]
    correlation = {a: {b: 1.0 if a == b else None for b in names} for a in names}
    for (a, b), values in sums.correlations.items():
        rho = round(float(np.mean(values)), 3) if values else None
        correlation[a][b] = correlation[b][a] = rho
    shares = np.array(sums.shares)
    return {
        "sentences": sentences,
        "methods": {name: sums.counts[name].scores() for name in names},
        "rank_correlation": correlation,
        "integrated_gradients": {
            "completeness_gap_median": round(float(np.median(sums.gaps)), 4) if sums.gaps else None,
            "completeness_gap_max": round(float(np.max(sums.gaps)), 4) if sums.gaps else None,
            "source_share_median": round(float(np.median(shares)), 3) if shares.size else None,
            "steps_below_half": round(float(np.mean(shares < LOW_SOURCE_SHARE)), 3) if shares.size else None,
            "steps": int(shares.size),
        },
    }
