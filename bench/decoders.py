"""Three greedy decoders that differ only in how each step's logits are computed, so their timings
compare the step itself: our KV-cached decoder, our decoder recomputing the whole prefix, and
torch.nn.Transformer (no cache) with our weights copied in."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from bench.reference import TorchReference
from core.inference.source import max_steps
from core.model.transformer import Transformer
from core.text.batches import pad_batch
from core.text.vocab import BOS_ID, EOS_ID

NextLogits = Callable[[Tensor, int], Tensor]  # (prefix (B, t), step) -> logits of the next token (B, V)
DECODERS = ("cached", "recompute", "torch")


def _lockstep(
    next_logits: NextLogits, limits: list[int], device: torch.device, forced_steps: int | None
) -> list[list[int]]:
    """All rows step together until each has produced <eos> or reached its limit.
    forced_steps: ignore <eos> and produce exactly that many tokens (fixed-length timing)."""
    batch = len(limits)
    prefix = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=device)
    finished = torch.zeros(batch, dtype=torch.bool, device=device)
    limit_tensor = torch.tensor(limits, device=device)
    total = forced_steps if forced_steps is not None else max(limits)
    for step in range(total):
        token = next_logits(prefix, step).argmax(-1, keepdim=True)
        prefix = torch.cat([prefix, token], dim=1)
        if forced_steps is None:
            finished |= (token.squeeze(1) == EOS_ID) | (step + 1 >= limit_tensor)
            if bool(finished.all()):
                break
    rows = prefix[:, 1:].tolist()
    if forced_steps is not None:
        return rows
    return [
        row[:limit][: row.index(EOS_ID)] if EOS_ID in row[:limit] else row[:limit] for row, limit in zip(rows, limits)
    ]


@torch.no_grad()
def greedy(
    decoder: str,
    model: Transformer,
    reference: TorchReference | None,
    sources: Sequence[Sequence[int]],
    forced_steps: int | None = None,
) -> list[list[int]]:
    """Greedy token ids (no <bos>/<eos>) for a batch of source id lists, by the named decoder."""
    device = next(model.parameters()).device
    src = pad_batch(sources).to(device)
    limits = [max_steps(model, len(s)) for s in sources]
    if decoder == "cached":
        encoded = model.encode(src)
        cache = model.new_cache()

        def next_logits(prefix: Tensor, step: int) -> Tensor:
            return model.decode(prefix[:, -1:], encoded, cache=cache, offset=step)[0][:, -1]

    elif decoder == "recompute":
        encoded = model.encode(src)

        def next_logits(prefix: Tensor, step: int) -> Tensor:
            return model.decode(prefix, encoded)[0][:, -1]

    elif decoder == "torch" and reference is not None:
        memory = reference.encode(src)

        def next_logits(prefix: Tensor, step: int) -> Tensor:
            return reference.decode(prefix, memory, src)[:, -1]

    else:
        raise ValueError(f"unknown decoder {decoder!r} (or no reference model for 'torch')")
    return _lockstep(next_logits, limits, device, forced_steps)
