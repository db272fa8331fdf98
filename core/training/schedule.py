"""The learning-rate schedule: linear warmup, then cosine decay."""

from __future__ import annotations

import math


def warmup_cosine(step: int, warmup: int, total: int, floor: float = 0.05) -> float:
    """LR multiplier: linear warmup to 1, then cosine decay to `floor`."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
