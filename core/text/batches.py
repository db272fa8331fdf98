"""Padded, length-bucketed batches of token ids."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from core.text.vocab import PAD_ID


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> Tensor:
    """List of id lists -> (B, T_max) long tensor, right-padded."""
    rows = [torch.tensor(seq, dtype=torch.long) for seq in sequences]
    return pad_sequence(rows, batch_first=True, padding_value=pad_id)


def bucket_batches(lengths: Sequence[int], max_tokens: int, rng: random.Random | None = None) -> list[list[int]]:
    """Group example indices of similar length so that (longest length x batch size) <= max_tokens.

    With rng, lengths get a little noise before sorting and the batch order is shuffled, so each
    epoch sees different neighbours; without it the batches are deterministic (for evaluation).
    """
    noise = (lambda: rng.random()) if rng else (lambda: 0.0)
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i] + noise(), i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        longest_if_added = max(longest, lengths[index])
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[index]
        current.append(index)
        longest = longest_if_added
    if current:
        batches.append(current)
    if rng:
        rng.shuffle(batches)
    return batches


def iterate_batches(
    examples: Sequence[tuple[list[int], list[int]]], max_tokens: int, rng: random.Random | None = None
) -> Iterator[tuple[Tensor, Tensor]]:
    """(source ids, target ids incl. <bos>/<eos>) examples -> padded (src, tgt) tensor batches."""
    lengths = [len(src) + len(tgt) for src, tgt in examples]
    for batch in bucket_batches(lengths, max_tokens, rng):
        yield pad_batch([examples[i][0] for i in batch]), pad_batch([examples[i][1] for i in batch])
