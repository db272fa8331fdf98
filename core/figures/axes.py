"""What every figure shares: arrays from tensors or lists, shape checks against the token lists,
token axes, and literal text. Token axes are numeric with tick labels, so repeated tokens (two
"the") stay separate columns; rows are queries and columns are keys, and the axes say so.

Plotly renders its text (titles, tick labels, hover, cell text) as pseudo-HTML: a token such as
`<a href="http://…">我</a>` would become a link and `<b>喜</b>` bold. Every text that comes from a
model, a vocabulary or a card goes through `literal` before it reaches a figure."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np

COLORSCALE = "Blues"
TICK_CHARS = 40  # a longer token is cut on an axis (with …); hover shows up to HOVER_CHARS
HOVER_CHARS = 300
# Characters that are invisible or reorder the text around them (bidi overrides and isolates,
# zero-width marks, controls): shown as their code point instead.
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def visible(text: str) -> str:
    """Invisible or direction-changing characters shown as their code point (⟨U+202E⟩), so a token
    cannot hide itself or reverse the text around it; everything else unchanged."""
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def literal(text: str, limit: int | None = None) -> str:
    """`text` as plotly will show it, character for character: its markup and entities escaped,
    hidden or direction-changing characters as ⟨U+202E⟩; cut to `limit` characters with …
    (also right for text inside HTML elements)."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return html.escape(visible(text), quote=False)


def literals(texts: Sequence[str], limit: int | None = HOVER_CHARS) -> list[str]:
    return [literal(text, limit) for text in texts]


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
        "ticktext": literals(tokens, TICK_CHARS),
        "tickfont": {"size": font_size} if font_size else {},
        "showgrid": False,
    }


def pair_hover(query_tokens: Sequence[str], key_tokens: Sequence[str]) -> list[list[str]]:
    """'query → key' for every cell of an attention matrix, literal."""
    keys = literals(key_tokens, TICK_CHARS)
    return [[f"{q} → {k}" for k in keys] for q in literals(query_tokens, TICK_CHARS)]
