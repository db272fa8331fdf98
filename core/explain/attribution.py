"""What each output token draws on: one relevance matrix per method over the same axes
(rows = the step that produced output token t, columns = source tokens), and, where the method
has one, the share of the decoder's own prefix.

Methods: raw cross-attention, norm-based attention, attention rollout (core.explain.attention_flow),
gradient × input and integrated gradients (core.explain.gradients). `python -m core.explain`
writes them as JSON; the Explain page draws them side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.explain import attention_flow, gradients
from core.explain.attention_flow import AttentionChoice
from core.inference.trace import Trace
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.vocab import Vocab

METHODS = {
    "attention": "Raw cross-attention",
    "norm": "Norm-based attention",
    "rollout": "Attention rollout",
    "grad_x_input": "Gradient × input",
    "ig": "Integrated gradients",
}
SIGNED = {"grad_x_input", "ig"}  # attributions that can be negative (a token that argues against)
NEEDS_TRANSFORMER = {
    "norm": "Norm-based attention reads multi-head attention's value vectors and output projection; "
    "this GRU model's additive attention has neither.",
    "rollout": "Attention rollout multiplies attention through self-attention layers; this GRU model has "
    "none (its recurrence mixes the tokens, and rollout cannot follow it).",
}
MEAN_ATTENTION = AttentionChoice()
LOW_SOURCE_SHARE = 0.5  # a step drawing less than half on the source is flagged (docs/explain.md)


@dataclass
class Attribution:
    method: str
    source: np.ndarray  # (T, S)
    prefix: np.ndarray | None  # (T, T) over the decoder's input tokens, or None
    delta: np.ndarray | None  # (T,) IG's f(input) − f(baseline), or None

    def to_json(self, trace: Trace) -> dict[str, Any]:
        """The CLI's line: DESIGN.md's fields, plus the tokens each row produced."""
        return {
            "source_tokens": trace.source.tokens,
            "decoder_tokens": trace.decoder_tokens,
            "target_tokens": [step.token for step in trace.steps],
            "method": self.method,
            "source": self.source.tolist(),
            "prefix": None if self.prefix is None else self.prefix.tolist(),
            "delta": None if self.delta is None else self.delta.tolist(),
        }


def unsupported(model: Seq2Seq, method: str) -> str | None:
    """Why this model cannot be explained by this method, or None when it can."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if method in NEEDS_TRANSFORMER and not hasattr(model, "decoder_layers"):
        return NEEDS_TRANSFORMER[method]
    return None


def explain(
    model: Seq2Seq,
    trace: Trace,
    vocab: Vocab,
    method: str,
    intervention: Intervention = NO_INTERVENTION,
    attention: AttentionChoice = MEAN_ATTENTION,
    ig_steps: int = gradients.IG_STEPS,
) -> Attribution:
    """The method's attribution for every step of the trace (made with the same intervention)."""
    if reason := unsupported(model, method):
        raise ValueError(reason)
    if method == "attention":
        return Attribution(method, attention_flow.raw_attention(trace, attention, intervention), None, None)
    if method == "norm":
        return Attribution(method, attention_flow.norm_based(model, trace, intervention).mean(axis=0), None, None)
    if method == "rollout":
        return Attribution(method, *attention_flow.rollout(trace, intervention), None)
    if method == "grad_x_input":
        result = gradients.grad_x_input(model, trace, vocab, intervention)
    else:
        result = gradients.integrated_gradients(model, trace, vocab, intervention, ig_steps)
    return Attribution(method, result.source, result.prefix, result.delta)


# Integrated gradients cost ~ steps × (source + prefix tokens) × IG_STEPS forward-backward rows; the
# app computes them up to this many step-tokens (~8 s on 2 cores; a 10-word sentence is ~350).
APP_IG_LIMIT = 3000


def ig_cost(trace: Trace) -> int:
    """Steps × (source tokens + decoder input tokens): what IG's time grows with."""
    return len(trace.steps) * (len(trace.source.ids) + len(trace.decoder_tokens))


def explain_all(
    model: Seq2Seq,
    trace: Trace,
    vocab: Vocab,
    intervention: Intervention = NO_INTERVENTION,
    ig_limit: int | None = None,
) -> dict[str, Attribution | str]:
    """Every method but raw attention (which depends on a view, and is instant): method -> its
    attribution, or the reason it is not given (the model lacks what it reads, or IG over the limit).
    Both gradient methods come from one forward pass when IG is computed."""
    results: dict[str, Attribution | str] = {}
    for method in ("norm", "rollout"):
        results[method] = unsupported(model, method) or explain(model, trace, vocab, method, intervention)
    if ig_limit is not None and ig_cost(trace) > ig_limit:
        results["grad_x_input"] = explain(model, trace, vocab, "grad_x_input", intervention)
        results["ig"] = (
            f"Integrated gradients are computed here for translations up to {ig_limit} step × token "
            f"units; this one has {ig_cost(trace)}. `python -m core.explain --method ig` computes them "
            "for any length."
        )
    else:
        both = gradients.gradient_attributions(model, trace, vocab, intervention)
        for method, result in both.items():
            results[method] = Attribution(method, result.source, result.prefix, result.delta)
    return {method: results[method] for method in METHODS if method in results}


def source_share(attribution: Attribution) -> np.ndarray | None:
    """(T,): Σ_s |a_ts| / (Σ_s |a_ts| + Σ_j |p_tj|), how much of step t comes from the source rather
    than from the tokens already written; None for a method without a prefix part."""
    if attribution.prefix is None:
        return None
    source = np.abs(attribution.source).sum(axis=1)
    total = source + np.abs(attribution.prefix).sum(axis=1)
    return np.divide(source, total, out=np.zeros_like(source), where=total > 0)


def row_normalised(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by the sum of its absolute values, so methods on different scales share one
    colour scale (signs kept)."""
    scale = np.abs(matrix).sum(axis=1, keepdims=True)
    return np.divide(matrix, scale, out=np.zeros_like(matrix, dtype=float), where=scale > 0)
