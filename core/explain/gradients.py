"""Gradient attributions of each output token's log-probability to the input embeddings:
gradient × input, and integrated gradients (Sundararajan et al. 2017).

f_t = log p(y_t | source, y_<t) in one teacher-forced pass over the decoded tokens. The inputs are
the token embeddings of the source *and* of the decoder's input (its prefix: <bos> and the tokens
already written), after the embedding's scaling and before the positional encoding; a token's
attribution is the sum over its embedding's dimensions. IG's baseline is all-zero token embeddings
(the positions are kept), so by completeness Σ_source + Σ_prefix ≈ delta_t = f_t(input) − f_t(baseline).

Captum (the PyTorch attribution library) is the reference: tests/test_explain.py shows these are
Captum's `IntegratedGradients` (Gauss-Legendre) and `InputXGradient`, value for value. Captum
explains T targets by repeating every interpolated input T times, so its forward pass does T times
the work; here one forward pass serves all T targets and only the backward pass runs per target,
2-4× faster for a 10-word sentence (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.inference.source import model_device
from core.inference.trace import Trace
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.vocab import Vocab

# Gauss-Legendre points: on dev sentences the completeness gap is ~1.5% at 20 (2% at 16, 1% at 32),
# and a 10-word sentence takes ~1 s on 2 CPU cores (docs/explain.md)
IG_STEPS = 20


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


def _per_token(source: Tensor, prefix: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(T, tokens, d) attributions -> (T, tokens): each token's sum over its embedding."""
    return source.sum(dim=-1).detach().cpu().numpy(), prefix.sum(dim=-1).detach().cpu().numpy()


def _check_eval(model: Seq2Seq) -> None:
    if model.training:
        raise ValueError("attributions need the model in eval mode (dropout would make them random)")


def _per_target_gradients(outputs: Tensor, inputs: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
    """outputs (B, T) computed from inputs (B, …): the gradient of each column t (summed over the
    batch's rows) with respect to every input, stacked as (T, B, …). One backward pass per target,
    all over the same forward pass."""
    steps = outputs.size(1)
    grads = [torch.autograd.grad(outputs[:, t].sum(), inputs, retain_graph=t < steps - 1) for t in range(steps)]
    return torch.stack([g[0] for g in grads]), torch.stack([g[1] for g in grads])


def gradient_attributions(
    model: Seq2Seq, trace: Trace, vocab: Vocab, intervention: Intervention = NO_INTERVENTION, n_steps: int = IG_STEPS
) -> dict[str, GradientAttribution]:
    """Both methods from one forward pass: integrated gradients from the zero-embedding baseline
    along the straight path with Gauss-Legendre points (Captum's default), attribution =
    e · Σ_k w_k ∂f_t/∂e(α_k e); and gradient × input, e · ∂f_t/∂e(e), the path's point α = 1
    added to the same batch. Every step t at once. Keys "ig" and "grad_x_input"."""
    _check_eval(model)
    inputs = _inputs(model, trace, vocab)
    forward = _log_probs(model, inputs, intervention)
    source, prefix = _embeddings(model, inputs)
    nodes, weights = np.polynomial.legendre.leggauss(n_steps)  # on [-1, 1]: moved to [0, 1]
    alphas = torch.tensor([*((nodes + 1) / 2), 1.0], dtype=source.dtype, device=source.device)[:, None, None]
    weights = torch.tensor(weights / 2, dtype=source.dtype, device=source.device)[None, :, None, None]
    with torch.enable_grad():
        path = ((source * alphas).requires_grad_(), (prefix * alphas).requires_grad_())  # (n_steps + 1, …)
        grad_source, grad_prefix = _per_target_gradients(forward(*path), path)  # (T, n_steps + 1, …)
    integrated = ((grad_source[:, :-1] * weights).sum(1) * source, (grad_prefix[:, :-1] * weights).sum(1) * prefix)
    with torch.no_grad():
        at_input = forward(source, prefix)[0]
        at_baseline = forward(torch.zeros_like(source), torch.zeros_like(prefix))[0]
    return {
        "ig": GradientAttribution(*_per_token(*integrated), (at_input - at_baseline).cpu().numpy()),
        "grad_x_input": GradientAttribution(
            *_per_token(grad_source[:, -1] * source, grad_prefix[:, -1] * prefix), None
        ),
    }


def grad_x_input(
    model: Seq2Seq, trace: Trace, vocab: Vocab, intervention: Intervention = NO_INTERVENTION
) -> GradientAttribution:
    """∂f_t/∂e · e for every step t and input token embedding e."""
    _check_eval(model)
    inputs = _inputs(model, trace, vocab)
    source, prefix = _embeddings(model, inputs)
    with torch.enable_grad():
        leaves = (source.clone().requires_grad_(), prefix.clone().requires_grad_())
        grad_source, grad_prefix = _per_target_gradients(_log_probs(model, inputs, intervention)(*leaves), leaves)
    return GradientAttribution(*_per_token(grad_source[:, 0] * source, grad_prefix[:, 0] * prefix), None)


def integrated_gradients(
    model: Seq2Seq, trace: Trace, vocab: Vocab, intervention: Intervention = NO_INTERVENTION, n_steps: int = IG_STEPS
) -> GradientAttribution:
    """Integrated gradients alone (see gradient_attributions)."""
    return gradient_attributions(model, trace, vocab, intervention, n_steps)["ig"]


def completeness_gap(source: np.ndarray, prefix: np.ndarray, delta: np.ndarray) -> float:
    """Σ_t |Σ attributions_t − delta_t| / Σ_t |delta_t| over a sentence's steps: 0 for exact
    integrated gradients. (Summed, not per step: a step whose delta is near 0 would make a per-step
    ratio meaningless while its absolute error is tiny.)"""
    total = source.sum(axis=1) + prefix.sum(axis=1)
    scale = float(np.abs(delta).sum())
    return float(np.abs(total - delta).sum() / scale) if scale > 0 else 0.0
