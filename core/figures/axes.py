"""What every figure shares: arrays from tensors or lists, shape checks against the token lists,
and token axes. Token axes are numeric with tick labels, so repeated tokens (two "the") stay
separate columns; rows are queries and columns are keys, and the axes say so."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

COLORSCALE = "Blues"


def as_array(weights) -> np.ndarray:
    array = weights.detach().cpu().numpy() if hasattr(weights, "detach") else np.asarray(weights, dtype=float)
    return array.astype(float)


def check_matrix(matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str]) -> None:
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D attention matrix, got shape {matrix.shape}")
    if matrix.shape != (len(rows), len(cols)):
        raise ValueError(
            f"matrix shape {matrix.shape} does not match {len(rows)} query tokens x {len(cols)} key tokens"
        )


def token_axis(tokens: Sequence[str], title: str, font_size: int | None = None) -> dict:
    return {
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": list(range(len(tokens))),
        "ticktext": list(tokens),
        "tickfont": {"size": font_size} if font_size else {},
        "showgrid": False,
    }
