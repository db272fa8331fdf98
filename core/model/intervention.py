"""Interventions: changes to one forward pass that the caller passes in (to `encode`), so the
shared model object is never modified and two users can intervene differently at the same time."""

from __future__ import annotations

from dataclasses import dataclass

import torch

POSITION_MODES = {
    "normal": "positions as trained",
    "removed": "positional encoding removed",
    "shuffled": "positions shuffled",
}
SHUFFLE_SEED = 0  # fixed, so the ablation is reproducible (and cacheable)


@dataclass(frozen=True)
class Intervention:
    """source_positions: the encoder input's positional encoding, as trained ("normal"), left out
    ("removed") or given to the tokens in a fixed shuffled order ("shuffled")."""

    source_positions: str = "normal"

    def __post_init__(self) -> None:
        if self.source_positions not in POSITION_MODES:
            raise ValueError(
                f"unknown position mode {self.source_positions!r}; expected one of {', '.join(POSITION_MODES)}"
            )


NO_INTERVENTION = Intervention()


def shuffled_positions(length: int, seed: int = SHUFFLE_SEED) -> list[int]:
    """A fixed permutation of 0 .. length-1 that moves something whenever length > 1."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(length, generator=generator).tolist()
    if length > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return order
