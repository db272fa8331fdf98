"""Explanation figures: every method's relevance map on the same axes (rows = output tokens, each
the token its step produced; columns = source tokens), one step's relevance per method as bars,
the source-vs-prefix share of every step, and one step's logit lens."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import COLORSCALE, as_array, check_matrix, literal, literals, pair_hover, token_axis

SIGNED_COLORSCALE = "RdBu"  # red = against the token, blue = for it; white = nothing
METHOD_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#17becf"]


def relevance_grid(
    matrices: Mapping[str, np.ndarray],
    signed: set[str],
    output_tokens: Sequence[str],
    source_tokens: Sequence[str],
    columns: int = 3,
) -> go.Figure:
    """matrices: title -> (T, S), each row normalised to Σ|row| = 1; titles in `signed` can be
    negative and get a diverging scale centred on 0."""
    titles = list(matrices)
    for title in titles:
        check_matrix(as_array(matrices[title]), output_tokens, source_tokens)
    columns = max(1, min(columns, len(titles)))
    rows = -(-len(titles) // columns)
    per_row = max(220, 22 * len(output_tokens) + 60)
    gap = 110  # pixels between rows of maps: the slanted source labels, then the next map's title
    height = per_row * rows + gap * (rows - 1) + 60
    figure = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=literals(titles),
        horizontal_spacing=0.12 / columns + 0.04,
        vertical_spacing=gap / height if rows > 1 else 0.0,
    )
    hover = pair_hover(output_tokens, source_tokens)
    for index, title in enumerate(titles):
        matrix = as_array(matrices[title])
        peak = max(float(np.abs(matrix).max(initial=0.0)), 1e-6)
        is_signed = title in signed
        figure.add_trace(
            go.Heatmap(
                z=matrix.tolist(),
                x=list(range(len(source_tokens))),
                y=list(range(len(output_tokens))),
                customdata=hover,
                hovertemplate=f"{literal(title)}<br>%{{customdata}}<br>share %{{z:.3f}}<extra></extra>",
                colorscale=SIGNED_COLORSCALE if is_signed else COLORSCALE,
                zmin=-peak if is_signed else 0.0,
                zmax=peak,
                zmid=0.0 if is_signed else None,
                showscale=False,
            ),
            row=index // columns + 1,
            col=index % columns + 1,
        )
    figure.update_xaxes(token_axis(source_tokens, "") | {"side": "bottom", "tickangle": -45})
    figure.update_yaxes(token_axis(output_tokens, "") | {"autorange": "reversed"})
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 70})
    figure.update_annotations(font={"size": 14})
    return figure


def step_bars(values: Mapping[str, np.ndarray], source_tokens: Sequence[str], title: str = "") -> go.Figure:
    """One step's relevance over the source tokens, one bar per method (grouped), row-normalised."""
    figure = go.Figure()
    for index, (name, row) in enumerate(values.items()):
        row = as_array(row)
        if row.shape != (len(source_tokens),):
            raise ValueError(f"{name}: {row.shape} values for {len(source_tokens)} source tokens")
        figure.add_trace(
            go.Bar(
                name=literal(name),
                x=list(range(len(source_tokens))),
                y=row.tolist(),
                customdata=literals(source_tokens),
                hovertemplate=f"{literal(name)}<br>%{{customdata}}: %{{y:.3f}}<extra></extra>",
                marker_color=METHOD_COLORS[index % len(METHOD_COLORS)],
            )
        )
    figure.update_layout(
        title=literal(title),
        barmode="group",
        xaxis=token_axis(source_tokens, "source token") | {"tickangle": -45},
        yaxis={"title": {"text": "share of the step's relevance"}, "zeroline": True},
        legend={"orientation": "h", "y": -0.35},
        height=420,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def source_share_strip(
    shares: Sequence[float],
    output_tokens: Sequence[str],
    threshold: float,
    selected: int | None = None,
    title: str = "",
) -> go.Figure:
    """Every step's share drawn from the source (the rest from the prefix); steps under the
    threshold in red, the selected step outlined."""
    values = as_array(shares)
    if values.shape != (len(output_tokens),):
        raise ValueError(f"{values.shape} shares for {len(output_tokens)} output tokens")
    colors = ["#d62728" if v < threshold else "#1f77b4" for v in values]
    outline = [3 if i == selected else 0 for i in range(len(values))]
    figure = go.Figure(
        go.Bar(
            x=list(range(len(values))),
            y=values.tolist(),
            customdata=literals(output_tokens),
            hovertemplate="step %{x}: %{customdata}<br>from the source %{y:.0%}<extra></extra>",
            marker={"color": colors, "line": {"width": outline, "color": "black"}},
        )
    )
    figure.add_hline(y=threshold, line_dash="dot", line_color="#d62728")
    figure.update_layout(
        title=literal(title),
        xaxis=token_axis(output_tokens, "output token (step)"),
        yaxis={"title": {"text": "from the source"}, "range": [0, 1], "tickformat": ".0%"},
        height=300,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def lens_table(rows: Sequence[Sequence[tuple[str, float]]], title: str = "") -> go.Figure:
    """One step's logit lens: rows = decoder layers (1 at the top), columns = rank; each cell shows
    the token, coloured by its probability."""
    layers = len(rows)
    width = max((len(row) for row in rows), default=0)
    probs = np.zeros((layers, width))
    texts = [["" for _ in range(width)] for _ in range(layers)]
    for layer, row in enumerate(rows):
        for rank, (token, prob) in enumerate(row):
            probs[layer, rank] = prob
            texts[layer][rank] = literal(token, 12)
    figure = go.Figure(
        go.Heatmap(
            z=probs.tolist(),
            x=[f"#{rank + 1}" for rank in range(width)],
            y=[f"layer {layer + 1}" for layer in range(layers)],
            text=texts,
            texttemplate="%{text}<br>%{z:.2f}",
            hovertemplate="%{y}, %{x}: %{text} (%{z:.3f})<extra></extra>",
            colorscale=COLORSCALE,
            zmin=0.0,
            zmax=1.0,
            colorbar={"title": {"text": "p"}},
        )
    )
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "rank"}, "side": "top"},
        yaxis={"title": {"text": "decoder layer"}, "autorange": "reversed"},
        height=120 + 60 * layers,
        margin={"l": 10, "r": 10, "t": 90 if title else 50, "b": 10},
    )
    return figure
