"""Three readings of attention as "which source token does output token t draw on", from the
weights a trace recorded (rows = the step that produced token t, columns = source tokens):

- raw cross-attention weights: the mean over layers and heads, the last layer, or one head;
- norm-based attention (Kobayashi et al. 2020): a weight says how much a head looks at a token, not
  how much of it arrives; ‖α·f(x)‖ with f(x) = (x W_V + b_V) W_O (the head's value vector carried
  through its slice of the output projection) measures what arrives. Summed over heads, per layer;
- attention rollout (Abnar & Zuidema 2020), extended to the encoder-decoder: each attention sublayer
  with its residual is ½A + ½I (A = the mean over heads), multiplied through the encoder, then
  through the decoder, where cross-attention mixes in the encoder's rolled-out source. It gives each
  output token's share over the source tokens *and* over the decoder's own prefix; rows sum to 1.

A head switched off by the intervention contributes nothing: it is left out of every mean and sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.inference.source import model_device
from core.inference.trace import Trace
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, HeadRef, Intervention

ATTENTION_VIEWS = {"mean": "mean of all layers and heads", "last": "last layer, mean of heads"}


@dataclass(frozen=True)
class AttentionChoice:
    """Which cross-attention weights stand for "attention": "mean", "last", or one head."""

    view: str = "mean"
    head: HeadRef | None = None  # a cross-attention head, when view == "head"

    def __post_init__(self) -> None:
        if self.view not in (*ATTENTION_VIEWS, "head"):
            raise ValueError(f"unknown attention view {self.view!r}; expected mean, last or a cross-attention head")
        if (self.view == "head") != (self.head is not None) or (self.head and self.head.kind != "cross"):
            raise ValueError("a head view names one cross-attention head (cross:layer:head)")

    def label(self) -> str:
        return f"head {self.head.spec()}" if self.head else ATTENTION_VIEWS[self.view]


def live_heads(intervention: Intervention, kind: str, layers: int, heads: int) -> np.ndarray:
    """(layers, heads): 1 for a head that is on, 0 for one the intervention switched off."""
    live = np.ones((layers, heads))
    for head in intervention.ablated_heads:
        if head.kind == kind and head.layer < layers and head.head < heads:
            live[head.layer, head.head] = 0.0
    return live


def _head_mean(maps: np.ndarray, live: np.ndarray) -> np.ndarray:
    """(L, H, Tq, Tk) -> (L, Tq, Tk): each layer's mean over its live heads (zeros if none is)."""
    counts = np.maximum(live.sum(axis=1), 1.0)
    return np.einsum("lh,lhqk->lqk", live, maps) / counts[:, None, None]


def raw_attention(trace: Trace, choice: AttentionChoice, intervention: Intervention = NO_INTERVENTION) -> np.ndarray:
    """(T, S) cross-attention weights as the choice reads them."""
    cross = trace.cross.numpy().astype(float)
    if choice.head is not None:
        if not (choice.head.layer < cross.shape[0] and choice.head.head < cross.shape[1]):
            raise ValueError(f"{choice.head.spec()} does not exist in this model")
        return cross[choice.head.layer, choice.head.head]
    means = _head_mean(cross, live_heads(intervention, "cross", *cross.shape[:2]))
    return means[-1] if choice.view == "last" else means.mean(axis=0)


@torch.no_grad()
def value_norms(model: Seq2Seq, source_ids: list[int], intervention: Intervention = NO_INTERVENTION) -> np.ndarray:
    """(L, H, S): ‖f_h(x_s)‖ = ‖(x_s W_V^h + b_V^h) W_O^h‖ for every decoder layer's cross-attention
    head h and source token s, x = the encoder's output (what cross-attention reads)."""
    device = model_device(model)
    memory = model.encode(torch.tensor([source_ids], device=device), intervention=intervention).memory[0]
    norms = []
    for layer in model.decoder_layers:
        attention = layer.cross_attn
        heads, size = attention.n_heads, attention.head_dim
        values = attention.v_proj(memory).view(-1, heads, size).transpose(0, 1)  # (H, S, d_k)
        out = attention.out_proj.weight.view(-1, heads, size).transpose(0, 1)  # (H, d, d_k)
        norms.append(torch.linalg.vector_norm(values @ out.transpose(1, 2), dim=-1))  # (H, S)
    return torch.stack(norms).float().cpu().numpy()


def norm_based(model: Seq2Seq, trace: Trace, intervention: Intervention = NO_INTERVENTION) -> np.ndarray:
    """(L, T, S): Σ_h ‖α^h_{t,s} f_h(x_s)‖ = Σ_h α^h_{t,s} ‖f_h(x_s)‖ (α ≥ 0), live heads only."""
    cross = trace.cross.numpy().astype(float)  # (L, H, T, S)
    norms = value_norms(model, trace.source.ids, intervention)
    live = live_heads(intervention, "cross", *cross.shape[:2])
    return np.einsum("lh,lhts,lhs->lts", live, cross, norms)


def _layer_means(trace: Trace, kind: str, intervention: Intervention) -> list[np.ndarray | None]:
    """Per layer, the mean over live heads; None for a layer whose heads are all switched off
    (only its residual path carries anything)."""
    maps = getattr(trace, kind).numpy().astype(float)
    live = live_heads(intervention, kind, *maps.shape[:2])
    return [mean if any(on) else None for mean, on in zip(_head_mean(maps, live), live)]


def rollout(trace: Trace, intervention: Intervention = NO_INTERVENTION) -> tuple[np.ndarray, np.ndarray]:
    """(source (T, S), prefix (T, T)): each output token's rolled-out share of every source token
    and of every decoder input token (its prefix); each row of the two together sums to 1."""
    steps, length = trace.cross.shape[2], trace.cross.shape[3]
    source = np.eye(length)  # encoder position -> source tokens
    for layer in _layer_means(trace, "encoder", intervention):
        if layer is not None:
            source = (0.5 * layer + 0.5 * np.eye(length)) @ source
    mixed = np.hstack([np.zeros((steps, length)), np.eye(steps)])  # decoder position -> [source | prefix]
    layers = zip(_layer_means(trace, "decoder", intervention), _layer_means(trace, "cross", intervention))
    for self_layer, cross_layer in layers:
        if self_layer is not None:
            mixed = (0.5 * self_layer + 0.5 * np.eye(steps)) @ mixed
        if cross_layer is not None:
            mixed = 0.5 * mixed + 0.5 * np.hstack([cross_layer @ source, np.zeros((steps, steps))])
    return mixed[:, :length], mixed[:, length:]
