"""Gradient attributions of each output token's log-probability to the input embeddings, with
Captum (the PyTorch attribution library): gradient × input, and integrated gradients (Sundararajan
et al. 2017).

f_t = log p(y_t | source, y_<t) in one teacher-forced pass over the decoded tokens. The inputs are
the token embeddings of the source *and* of the decoder's input (its prefix: <bos> and the tokens
already written), after the embedding's scaling and before the positional encoding; a token's
attribution is the sum over its embedding's dimensions. IG's baseline is all-zero token embeddings
(the positions are kept), so by completeness Σ_source + Σ_prefix ≈ delta_t = f_t(input) − f_t(baseline).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients
from torch import Tensor

from core.inference.source import model_device
from core.inference.trace import Trace
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.vocab import Vocab

# Gauss-Legendre points: on dev sentences the completeness gap is ~1.5% at 20 (2% at 16, 1% at 32),
# and a 10-word sentence takes ~1 s on 2 CPU cores (docs/explain.md)
IG_STEPS = 20
BATCH_TOKENS = 24_000  # (interpolation points × tokens) per forward pass: bounds memory per request


@dataclass
class GradientAttribution:
    source: np.ndarray  # (T, S)
    prefix: np.ndarray  # (T, T): zero above the diagonal (a step cannot see later tokens)
    delta: np.ndarray | None  # (T,) f_t(input) − f_t(baseline), for IG


@dataclass
class _Inputs:
    src: Tensor  # (1, S) ids
    tgt: Tensor  # (1, T) decoder input ids
    targets: Tensor  # (T,) the token each step produced


def _inputs(model: Seq2Seq, trace: Trace, vocab: Vocab) -> _Inputs:
    device = model_device(model)
    decoder_ids = [vocab.stoi[token] for token in trace.decoder_tokens]
    produced = [vocab.stoi[step.token] for step in trace.steps]
    return _Inputs(
        torch.tensor([trace.source.ids], device=device),
        torch.tensor([decoder_ids], device=device),
        torch.tensor(produced, device=device),
    )


def _log_probs(model: Seq2Seq, inputs: _Inputs, intervention: Intervention) -> Callable[[Tensor, Tensor], Tensor]:
    """(source embeddings (B, S, d), prefix embeddings (B, T, d)) -> (B, T) log p of each produced token."""

    def forward(source: Tensor, prefix: Tensor) -> Tensor:
        batch = source.size(0)
        encoded = model.encode(inputs.src.expand(batch, -1), intervention=intervention, token_embeddings=source)
        logits, _, _ = model.decode(
            inputs.tgt.expand(batch, -1), encoded, intervention=intervention, token_embeddings=prefix
        )
        log_probs = torch.log_softmax(logits, dim=-1)
        return log_probs.gather(-1, inputs.targets.expand(batch, -1)[..., None])[..., 0]

    return forward


def _embeddings(model: Seq2Seq, inputs: _Inputs) -> tuple[Tensor, Tensor]:
    with torch.no_grad():
        return model.src_embed(inputs.src), model.tgt_embed(inputs.tgt)


def _per_token(attributions: tuple[Tensor, Tensor]) -> tuple[np.ndarray, np.ndarray]:
    source, prefix = (a.sum(dim=-1).detach().cpu().numpy() for a in attributions)
    return source, prefix


def _check_eval(model: Seq2Seq) -> None:
    if model.training:
        raise ValueError("attributions need the model in eval mode (dropout would make them random)")


def grad_x_input(
    model: Seq2Seq, trace: Trace, vocab: Vocab, intervention: Intervention = NO_INTERVENTION
) -> GradientAttribution:
    """∂f_t/∂e · e for every step t and input token embedding e (one backward pass per step)."""
    _check_eval(model)
    inputs = _inputs(model, trace, vocab)
    steps = len(trace.steps)
    source, prefix = _embeddings(model, inputs)
    with torch.enable_grad():
        attributions = InputXGradient(_log_probs(model, inputs, intervention)).attribute(
            tuple(e.expand(steps, -1, -1).clone().requires_grad_() for e in (source, prefix)),
            target=list(range(steps)),
        )
    return GradientAttribution(*_per_token(attributions), None)


def integrated_gradients(
    model: Seq2Seq, trace: Trace, vocab: Vocab, intervention: Intervention = NO_INTERVENTION, n_steps: int = IG_STEPS
) -> GradientAttribution:
    """IG from the zero-embedding baseline, every step's target at once (one batch row per step)."""
    _check_eval(model)
    inputs = _inputs(model, trace, vocab)
    steps = len(trace.steps)
    forward = _log_probs(model, inputs, intervention)
    source, prefix = (e.expand(steps, -1, -1).clone() for e in _embeddings(model, inputs))
    baselines = (torch.zeros_like(source), torch.zeros_like(prefix))
    tokens = source.size(1) + prefix.size(1)
    with torch.enable_grad():
        attributions = IntegratedGradients(forward).attribute(
            (source, prefix),
            baselines=baselines,
            target=list(range(steps)),
            n_steps=n_steps,
            internal_batch_size=max(steps, BATCH_TOKENS // tokens),
        )
    with torch.no_grad():
        at_input, at_baseline = forward(source[:1], prefix[:1])[0], forward(*(b[:1] for b in baselines))[0]
    delta = (at_input - at_baseline).cpu().numpy()
    return GradientAttribution(*_per_token(attributions), delta)


def completeness_gap(source: np.ndarray, prefix: np.ndarray, delta: np.ndarray) -> float:
    """Σ_t |Σ attributions_t − delta_t| / Σ_t |delta_t| over a sentence's steps: 0 for exact
    integrated gradients. (Summed, not per step: a step whose delta is near 0 would make a per-step
    ratio meaningless while its absolute error is tiny.)"""
    total = source.sum(axis=1) + prefix.sum(axis=1)
    scale = float(np.abs(delta).sum())
    return float(np.abs(total - delta).sum() / scale) if scale > 0 else 0.0
