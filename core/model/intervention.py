"""Interventions: changes to one forward pass that the caller passes in (to `encode` and `decode`),
so the shared model object is never modified and two users can intervene differently at once.

- the source positions: as trained, removed, or shuffled (the positional-encoding ablation);
- ablated heads: a head's context vector (its slice of the attention output, before the output
  projection) set to zero, in encoder self-, decoder masked self- or cross-attention.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

POSITION_MODES = {
    "normal": "positions as trained",
    "removed": "positional encoding removed",
    "shuffled": "positions shuffled",
}
SHUFFLE_SEED = 0  # fixed, so the ablation is reproducible (and cacheable)
SPEC_KINDS = {"enc": "encoder", "dec": "decoder", "cross": "cross"}  # --ablate kind -> attention kind
KIND_SPECS = {kind: short for short, kind in SPEC_KINDS.items()}


@dataclass(frozen=True, order=True)
class HeadRef:
    """One attention head: kind "encoder" | "decoder" | "cross", layer and head from 0."""

    kind: str
    layer: int
    head: int

    def spec(self) -> str:
        """As written on the command line: kind:layer:head, 1-based (e.g. cross:3:2)."""
        return f"{KIND_SPECS[self.kind]}:{self.layer + 1}:{self.head + 1}"


def parse_heads(spec: str) -> frozenset[HeadRef]:
    """'enc:1:2,cross:3:4' -> heads; ValueError naming the first bad item. Ranges against a model
    are checked by core.model.registry.check_heads."""
    heads = set()
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        parts = item.split(":")
        if len(parts) != 3:
            raise ValueError(f"{item!r} is not kind:layer:head (e.g. cross:3:2)")
        kind, layer, head = parts
        if kind not in SPEC_KINDS:
            raise ValueError(f"{item!r}: unknown kind {kind!r}; expected enc, dec or cross")
        if not (layer.isdigit() and head.isdigit()):
            raise ValueError(f"{item!r}: layer and head must be whole numbers, counted from 1")
        if int(layer) < 1 or int(head) < 1:
            raise ValueError(f"{item!r}: layers and heads are counted from 1")
        heads.add(HeadRef(SPEC_KINDS[kind], int(layer) - 1, int(head) - 1))
    return frozenset(heads)


def heads_spec(heads: frozenset[HeadRef]) -> str:
    """The inverse of parse_heads, in a stable order."""
    return ",".join(head.spec() for head in sorted(heads, key=lambda h: (list(KIND_SPECS).index(h.kind), h)))


@dataclass(frozen=True)
class Intervention:
    """source_positions: the encoder input's positional encoding, as trained ("normal"), left out
    ("removed") or given to the tokens in a fixed shuffled order ("shuffled").
    ablated_heads: heads whose context vector is set to zero."""

    source_positions: str = "normal"
    ablated_heads: frozenset[HeadRef] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.source_positions not in POSITION_MODES:
            raise ValueError(
                f"unknown position mode {self.source_positions!r}; expected one of {', '.join(POSITION_MODES)}"
            )
        object.__setattr__(self, "ablated_heads", frozenset(self.ablated_heads))

    def head_mask(self, kind: str, layer: int, n_heads: int, device: torch.device | None = None) -> Tensor | None:
        """(n_heads,) with 0 for each ablated head of this layer and 1 elsewhere; None when none is."""
        ablated = [h.head for h in self.ablated_heads if h.kind == kind and h.layer == layer]
        if not ablated:
            return None
        mask = torch.ones(n_heads, device=device)
        mask[ablated] = 0.0
        return mask

    def ablated_specs(self) -> list[str]:
        """The ablated heads as the trace lists them (kind:layer:head, 1-based)."""
        return heads_spec(self.ablated_heads).split(",") if self.ablated_heads else []


NO_INTERVENTION = Intervention()


def shuffled_positions(length: int, seed: int = SHUFFLE_SEED) -> list[int]:
    """A fixed permutation of 0 .. length-1 that moves something whenever length > 1."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(length, generator=generator).tolist()
    if length > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return order
