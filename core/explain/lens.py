"""The logit lens (nostalgebraist 2020) for the decoder: the output projection applied to every
decoder layer's output, at every step. Where in the stack does the model commit to its character?

Each layer's output goes through the model's own readout (the final norm where the model has one,
then the output projection), exactly as the last layer's output does to give the real prediction;
so the last layer's row equals the trace's `steps[t].top_k`, value for value."""

from __future__ import annotations

import torch

from core.inference.trace import Trace
from core.model.base import Seq2Seq
from core.text.vocab import Vocab

LensRow = list[tuple[str, float]]  # the top-k tokens and their probabilities
LENS_NEEDS_TRANSFORMER = (
    "the logit lens reads every decoder layer's output through the model's one readout; this GRU "
    "model's recurrent layers feed an output layer of their own (with the context and previous token)"
)


def has_lens(model: Seq2Seq) -> bool:
    """Only an architecture whose decoder layers share one readout can be read through a lens."""
    return callable(getattr(model, "readout", None))


@torch.no_grad()
def logit_lens(model: Seq2Seq, trace: Trace, vocab: Vocab, k: int = 5) -> list[list[LensRow]]:
    """[layer][step] -> the top-k (token, probability) of that layer's output, from a trace made
    with keep_layer_states=True. ValueError for a model without a lens or a trace without states."""
    if not has_lens(model):
        raise ValueError(LENS_NEEDS_TRANSFORMER)
    if trace.layer_states is None:
        raise ValueError("the trace kept no decoder layer states: trace it with keep_layer_states=True")
    states = trace.layer_states.to(next(model.parameters()).device)
    lens = []
    for layer_states in states:
        rows = []
        for state in layer_states:
            # The same shape and operations as the decoding step's own readout, so the last layer's
            # probabilities are bit-for-bit those of the trace.
            probs = torch.softmax(model.readout(state[None, None])[0, -1].float(), dim=-1)
            top_p, top_i = probs.topk(min(k, probs.numel()))
            rows.append([(vocab.itos[i], float(p)) for p, i in zip(top_p.tolist(), top_i.tolist())])
        lens.append(rows)
    return lens


def lens_json(lens: list[list[LensRow]]) -> list[list[list[list[str | float]]]]:
    """DESIGN.md's `lens` field: [Ldec][T][k] of [token, prob]."""
    return [[[[token, prob] for token, prob in row] for row in layer] for layer in lens]


def commit_layer(lens: list[list[LensRow]], step: int) -> int | None:
    """The first layer (from 0) from which the lens's top token at this step is the final one and
    stays so; None when there are no layers."""
    if not lens:
        return None
    final = lens[-1][step][0][0]
    layer = len(lens) - 1
    while layer > 0 and lens[layer - 1][step][0][0] == final:
        layer -= 1
    return layer
