"""Corpus BLEU and chrF with sacrebleu (tokenize="zh", several references per sentence)."""

from __future__ import annotations

from collections.abc import Sequence

import sacrebleu


def score(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Corpus BLEU (tokenize="zh") and chrF; each hypothesis has one or more references."""
    if not hypotheses:
        raise ValueError("no sentences to score")
    width = max(len(r) for r in references)
    streams = [[refs[i] if i < len(refs) else None for refs in references] for i in range(width)]
    bleu = sacrebleu.corpus_bleu(list(hypotheses), streams, tokenize="zh")
    chrf = sacrebleu.corpus_chrf(list(hypotheses), streams)
    return {"bleu": round(bleu.score, 2), "chrf": round(chrf.score, 2)}
