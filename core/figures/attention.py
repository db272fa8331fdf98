"""Attention figures: a heatmap, all heads as a grid, layer means, one query's bars, and the
next-token candidates."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import COLORSCALE, as_array, check_matrix, literal, literals, pair_hover, token_axis


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    query_label: str = "query (row)",
    key_label: str = "key (column)",
    zmax: float | None = None,
    font_size: int | None = None,
) -> go.Figure:
    """One attention matrix as a heatmap; hover shows both tokens and the weight."""
    matrix = as_array(weights)
    check_matrix(matrix, query_tokens, key_tokens)
    hover = pair_hover(query_tokens, key_tokens)
    figure = go.Figure(
        go.Heatmap(
            z=matrix.tolist(),
            x=list(range(len(key_tokens))),
            y=list(range(len(query_tokens))),
            customdata=hover,
            hovertemplate="%{customdata}<br>weight %{z:.3f}<extra></extra>",
            colorscale=COLORSCALE,
            zmin=0.0,
            zmax=zmax if zmax is not None else max(float(matrix.max(initial=0.0)), 1e-6),
            colorbar={"title": {"text": "weight"}},
        )
    )
    figure.update_layout(
        title={"text": literal(title), "yref": "container", "y": 0.99, "yanchor": "top"},
        xaxis=token_axis(key_tokens, key_label, font_size) | {"side": "top"},
        yaxis=token_axis(query_tokens, query_label, font_size) | {"autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 120 if title else 80, "b": 10},
        height=max(340, 28 * len(query_tokens) + 140),
    )
    return figure


def heads_grid(maps, query_tokens: Sequence[str], key_tokens: Sequence[str], title: str = "") -> go.Figure:
    """All heads of all layers, (L, H, Tq, Tk), as a grid of small heatmaps (rows = layers)."""
    array = as_array(maps)
    if array.ndim != 4:
        raise ValueError(f"expected (layers, heads, queries, keys), got shape {array.shape}")
    layers, heads = array.shape[:2]
    check_matrix(array[0, 0], query_tokens, key_tokens)
    figure = make_subplots(
        rows=layers,
        cols=heads,
        subplot_titles=[f"layer {layer + 1} · head {h + 1}" for layer in range(layers) for h in range(heads)],
        horizontal_spacing=0.02,
        vertical_spacing=0.06,
    )
    hover = pair_hover(query_tokens, key_tokens)
    for layer in range(layers):
        for h in range(heads):
            figure.add_trace(
                go.Heatmap(
                    z=array[layer, h].tolist(),
                    customdata=hover,
                    hovertemplate=f"layer {layer + 1} head {h + 1}<br>%{{customdata}}<br>weight %{{z:.3f}}<extra></extra>",
                    colorscale=COLORSCALE,
                    zmin=0.0,
                    zmax=1.0,
                    showscale=False,
                ),
                row=layer + 1,
                col=h + 1,
            )
    figure.update_xaxes(showticklabels=False, showgrid=False)
    figure.update_yaxes(showticklabels=False, showgrid=False, autorange="reversed")
    figure.update_layout(title=literal(title), height=60 + 190 * layers, margin={"l": 10, "r": 10, "t": 80, "b": 10})
    return figure


def layer_means(maps, query_tokens: Sequence[str], key_tokens: Sequence[str], title: str = "") -> go.Figure:
    """Head-averaged attention, one heatmap per layer side by side."""
    array = as_array(maps)
    if array.ndim != 4:
        raise ValueError(f"expected (layers, heads, queries, keys), got shape {array.shape}")
    check_matrix(array[0, 0], query_tokens, key_tokens)
    means = array.mean(axis=1)
    figure = make_subplots(
        rows=1, cols=len(means), subplot_titles=[f"layer {layer + 1} (mean of heads)" for layer in range(len(means))]
    )
    hover = pair_hover(query_tokens, key_tokens)
    for layer, matrix in enumerate(means):
        figure.add_trace(
            go.Heatmap(
                z=matrix.tolist(),
                customdata=hover,
                hovertemplate="%{customdata}<br>weight %{z:.3f}<extra></extra>",
                colorscale=COLORSCALE,
                zmin=0.0,
                zmax=1.0,
                showscale=layer == 0,
            ),
            row=1,
            col=layer + 1,
        )
        figure.update_xaxes(token_axis(key_tokens, "key") | {"tickangle": -60}, row=1, col=layer + 1)
        figure.update_yaxes(
            token_axis(query_tokens, "query" if layer == 0 else "")
            | {"autorange": "reversed", "showticklabels": layer == 0},
            row=1,
            col=layer + 1,
        )
    figure.update_layout(
        title=literal(title), height=max(320, 140 + 24 * len(query_tokens)), margin={"l": 10, "r": 10, "t": 80, "b": 10}
    )
    return figure


def topk_bar(candidates: Sequence[tuple[str, float]], chosen: str, title: str = "") -> go.Figure:
    """Next-token candidates with their probabilities; the chosen one is highlighted."""
    tokens = [t for t, _ in candidates]
    probs = [p for _, p in candidates]
    colors = ["#1f77b4" if t == chosen else "#aec7e8" for t in tokens]
    figure = go.Figure(
        go.Bar(
            x=probs,
            y=list(range(len(tokens))),
            orientation="h",
            marker_color=colors,
            customdata=literals(tokens),
            hovertemplate="%{customdata}: %{x:.3f}<extra></extra>",
            text=[f"{p:.2f}" for p in probs],
            textposition="outside",
        )
    )
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "probability"}, "range": [0, 1.1]},
        yaxis=token_axis(tokens, "candidate") | {"autorange": "reversed"},
        height=80 + 36 * len(tokens),
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def attention_bars(weights, key_tokens: Sequence[str], title: str = "", key_label: str = "key") -> go.Figure:
    """One query's attention over the keys as bars (a row of a heatmap, easier to read)."""
    row = as_array(weights)
    if row.shape != (len(key_tokens),):
        raise ValueError(f"{row.shape[0] if row.ndim == 1 else row.shape} weights for {len(key_tokens)} key tokens")
    figure = go.Figure(
        go.Bar(
            x=list(range(len(key_tokens))),
            y=row.tolist(),
            customdata=literals(key_tokens),
            hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
            marker_color="#1f77b4",
        )
    )
    figure.update_layout(
        title=literal(title),
        # Labels slanted down-left end under their bar: plotly's automatic slant (down-right) pushes the
        # last label (<eos> in every cross-attention row) past the figure's edge, where it is hidden.
        xaxis=token_axis(key_tokens, key_label) | {"tickangle": -45},
        yaxis={"title": {"text": "weight"}, "range": [0, 1]},
        height=300,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure
