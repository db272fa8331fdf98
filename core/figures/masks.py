"""Pure plotly builders for the masks page: boolean masks and the attention score pipeline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import COLORSCALE, as_array, check_matrix, literal, literals, token_axis

ALLOWED, BLOCKED = "#2b6cb0", "#e2e8f0"
MASK_COLORS = [[0.0, BLOCKED], [0.5, BLOCKED], [0.5, ALLOWED], [1.0, ALLOWED]]
MASKED_TEXT = "−∞"


def _layout_axes(figure: go.Figure, rows: Sequence[str], cols: Sequence[str], row: int, col: int, first: bool) -> None:
    figure.update_xaxes(token_axis(cols, "key (column)") | {"tickangle": -60}, row=row, col=col)
    figure.update_yaxes(
        token_axis(rows, "query (row)" if first else "") | {"autorange": "reversed", "showticklabels": first},
        row=row,
        col=col,
    )


def mask_heatmap(mask, query_tokens: Sequence[str], key_tokens: Sequence[str], title: str = "") -> go.Figure:
    """A boolean mask (True = may attend) in two colours; hover says which."""
    array = np.asarray(mask, dtype=bool)
    check_matrix(array, query_tokens, key_tokens)
    words = np.where(array, "may attend", "blocked")
    figure = go.Figure(
        go.Heatmap(
            z=array.astype(int).tolist(),
            customdata=[
                [f"{literal(q, 60)} → {literal(k, 60)}: {words[i][j]}" for j, k in enumerate(key_tokens)]
                for i, q in enumerate(query_tokens)
            ],
            hovertemplate="%{customdata}<extra></extra>",
            colorscale=MASK_COLORS,
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=1,
            ygap=1,
        )
    )
    figure.update_layout(
        title={"text": literal(title), "yref": "container", "y": 0.99, "yanchor": "top"},
        xaxis=token_axis(key_tokens, "key (column)") | {"side": "top", "tickangle": -60},
        yaxis=token_axis(query_tokens, "query (row)") | {"autorange": "reversed"},
        height=max(300, 24 * len(query_tokens) + 150),
        margin={"l": 10, "r": 10, "t": 130, "b": 10},
    )
    return figure


def batch_padding(mask, tokens: Sequence[Sequence[str]], sentences: Sequence[str], title: str = "") -> go.Figure:
    """The batch's source padding mask: one row per sentence, each cell labelled with its token."""
    array = np.asarray(mask, dtype=bool)
    if array.shape != (len(tokens), len(tokens[0]) if tokens else 0) or len(sentences) != len(tokens):
        raise ValueError(f"mask shape {array.shape} does not match {len(tokens)} token rows")
    figure = go.Figure(
        go.Heatmap(
            z=array.astype(int).tolist(),
            text=[literals(row, 12) for row in tokens],
            texttemplate="%{text}",
            hovertemplate="position %{x}: %{text}<extra></extra>",
            colorscale=[[0.0, BLOCKED], [0.5, BLOCKED], [0.5, "#bee3f8"], [1.0, "#bee3f8"]],
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=2,
            ygap=2,
        )
    )
    labels = [f"sentence {i + 1}" for i in range(len(sentences))]
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "position"}, "dtick": 1},
        yaxis=token_axis(labels, "") | {"autorange": "reversed"},
        height=200,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def score_stages(
    raw, scaled, masked, weights, query_tokens: Sequence[str], key_tokens: Sequence[str], d_k: int
) -> go.Figure:
    """QKᵀ → ÷√d_k → masked → softmax, four heatmaps in a row; masked cells are shown as −∞."""
    arrays = [as_array(a) for a in (raw, scaled, masked, weights)]
    for array in arrays:
        check_matrix(array, query_tokens, key_tokens)
    titles = ["1. Q·Kᵀ", f"2. ÷ √d_k = ÷ {np.sqrt(d_k):.2f}", "3. masked (−∞)", "4. softmax over each row"]
    figure = make_subplots(rows=1, cols=4, subplot_titles=titles, horizontal_spacing=0.035)
    finite = np.isfinite(arrays[2])
    for col, array in enumerate(arrays, start=1):
        is_weights = col == 4
        z = np.where(np.isfinite(array), array, np.nan)
        limit = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
        text = [[MASKED_TEXT if col == 3 and not ok else "" for ok in row] for row in finite]
        figure.add_trace(
            go.Heatmap(
                z=[[None if np.isnan(v) else float(v) for v in row] for row in z],
                text=text,
                texttemplate="%{text}",
                hovertemplate="query %{y} → key %{x}<br>%{z:.3f}<extra></extra>",
                colorscale=COLORSCALE if is_weights else "RdBu",
                reversescale=not is_weights,
                zmin=0.0 if is_weights else -limit,
                zmax=1.0 if is_weights else limit,
                zmid=None if is_weights else 0.0,
                showscale=False,
                xgap=1,
                ygap=1,
            ),
            row=1,
            col=col,
        )
        _layout_axes(figure, query_tokens, key_tokens, 1, col, col == 1)
    figure.update_annotations(yshift=12)  # subplot titles clear of the heatmaps
    figure.update_layout(
        height=max(340, 22 * len(query_tokens) + 180),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        plot_bgcolor=BLOCKED,
    )
    return figure


def fill_comparison(
    weights: Mapping[str, np.ndarray],
    leaked: Mapping[str, float],
    mask,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
) -> go.Figure:
    """Softmax weights after filling masked scores with different values, side by side on one
    0..1 scale; cells that should be blocked are marked ×, the title gives the mass leaked there."""
    allowed = np.asarray(mask, dtype=bool)
    check_matrix(allowed, query_tokens, key_tokens)
    titles = [f"fill {label}<br>max leak {leaked[label]:.0%}" for label in weights]
    figure = make_subplots(rows=1, cols=len(weights), subplot_titles=titles, horizontal_spacing=0.04)
    marks = [["×" if not ok else "" for ok in row] for row in allowed]
    for col, array in enumerate(weights.values(), start=1):
        array = as_array(array)
        check_matrix(array, query_tokens, key_tokens)
        figure.add_trace(
            go.Heatmap(
                z=array.tolist(),
                text=marks,
                texttemplate="%{text}",
                textfont={"color": "#c53030"},
                hovertemplate="query %{y} → key %{x}<br>weight %{z:.3f}<extra></extra>",
                colorscale=COLORSCALE,
                zmin=0.0,
                zmax=1.0,
                showscale=col == len(weights),
                xgap=1,
                ygap=1,
            ),
            row=1,
            col=col,
        )
        _layout_axes(figure, query_tokens, key_tokens, 1, col, col == 1)
    figure.update_annotations(yshift=12)
    figure.update_layout(height=max(340, 22 * len(query_tokens) + 200), margin={"l": 10, "r": 10, "t": 90, "b": 10})
    return figure
