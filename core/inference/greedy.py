"""Batched greedy decoding with the KV cache."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.inference.source import max_steps, model_device
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.batches import pad_batch
from core.text.vocab import BOS_ID, EOS_ID


@torch.no_grad()
def greedy_ids(
    model: Seq2Seq, sources: Sequence[Sequence[int]], intervention: Intervention = NO_INTERVENTION
) -> list[list[int]]:
    """Returns the generated ids of each source, without <bos>/<eos>."""
    src = pad_batch(sources).to(model_device(model))
    encoded = model.encode(src, intervention=intervention)
    cache = model.new_cache()
    batch = src.size(0)
    last = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=src.device)
    limits = torch.tensor([max_steps(model, len(s)) for s in sources], device=src.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
    generated = []
    for step in range(int(limits.max())):
        logits, _, _ = model.decode(last, encoded, cache=cache, offset=step, intervention=intervention)
        last = logits[:, -1].argmax(-1, keepdim=True)
        generated.append(last)
        finished |= (last.squeeze(1) == EOS_ID) | (step + 1 >= limits)
        if bool(finished.all()):
            break
    rows = torch.cat(generated, dim=1).tolist()
    out = []
    for row, limit in zip(rows, limits.tolist()):
        row = row[:limit]
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out
