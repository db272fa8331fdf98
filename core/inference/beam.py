"""Beam search for one sentence, with GNMT length normalisation."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.inference.source import max_steps, model_device
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.vocab import BOS_ID, EOS_ID


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length normalisation: ((5 + length) / 6) ** alpha."""
    return ((5 + length) / 6) ** alpha


@torch.no_grad()
def beam_search_ids(
    model: Seq2Seq,
    source_ids: Sequence[int],
    beam_size: int = 4,
    alpha: float = 0.6,
    intervention: Intervention = NO_INTERVENTION,
) -> list[int]:
    """Finished hypotheses are ranked by log-prob / length penalty; returns ids without <bos>/<eos>.

    Stops when no hypothesis still alive can beat the best finished one (or at the length limit);
    with beam_size=1 this is greedy decoding.
    """
    if beam_size < 1:
        raise ValueError("beam size must be at least 1")
    device = model_device(model)
    encoded = model.encode(torch.tensor([list(source_ids)], device=device), intervention=intervention)
    cache = model.new_cache()
    alive: list[tuple[float, list[int]]] = [(0.0, [])]
    finished: list[tuple[float, list[int]]] = []
    limit = max_steps(model, len(source_ids))
    for step in range(limit):
        last = torch.tensor([[seq[-1] if seq else BOS_ID] for _, seq in alive], device=device)
        logits, _, _ = model.decode(
            last, encoded.expand(len(alive)), cache=cache, offset=step, intervention=intervention
        )
        log_probs = torch.log_softmax(logits[:, -1].float(), dim=-1)
        totals = torch.tensor([score for score, _ in alive], device=device)[:, None] + log_probs
        values, flat = totals.flatten().topk(min(2 * beam_size, totals.numel()))
        next_alive, parents = [], []
        for value, index in zip(values.tolist(), flat.tolist()):
            parent, token = divmod(index, log_probs.size(1))
            sequence = alive[parent][1] + [token]
            if token == EOS_ID or step + 1 == limit:
                finished.append((value / length_penalty(len(sequence), alpha), sequence))
            else:
                next_alive.append((value, sequence))
                parents.append(parent)
            if len(next_alive) == beam_size:
                break
        if not next_alive or (finished and _cannot_improve(finished, next_alive, limit, alpha)):
            break
        alive = next_alive
        for layer in cache:
            layer.reorder(torch.tensor(parents, device=device))
    best = max(finished or [(s / length_penalty(len(q), alpha), q) for s, q in alive], key=lambda item: item[0])[1]
    return [t for t in best if t != EOS_ID]


def _cannot_improve(
    finished: list[tuple[float, list[int]]], alive: list[tuple[float, list[int]]], limit: int, alpha: float
) -> bool:
    """A log-prob only falls as a hypothesis grows, and the penalty is largest at the length limit,
    so an alive hypothesis can reach at most its log-prob / length_penalty(limit)."""
    best_finished = max(score for score, _ in finished)
    return best_finished >= max(score for score, _ in alive) / length_penalty(limit, alpha)
