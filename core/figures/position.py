"""Pure plotly builders for the positional-encoding page (arrays in, figures out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import as_array, literal, literals, token_axis

DIVERGING = "RdBu"


def _check_table(table: np.ndarray) -> None:
    if table.ndim != 2 or 0 in table.shape:
        raise ValueError(f"expected a (positions, dimensions) table, got shape {table.shape}")


def pe_heatmap(table, title: str = "") -> go.Figure:
    """The positional-encoding matrix: rows = positions, columns = dimensions, values in [-1, 1]."""
    array = as_array(table)
    _check_table(array)
    figure = go.Figure(
        go.Heatmap(
            z=array.tolist(),
            colorscale=DIVERGING,
            zmin=-1.0,
            zmax=1.0,
            hovertemplate="position %{y}, dimension %{x}<br>PE = %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "PE"}},
        )
    )
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "dimension i"}},
        yaxis={"title": {"text": "position p"}, "autorange": "reversed"},
        height=460,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def pe_dimensions(table, dimensions: Sequence[int], wavelengths: Sequence[float], title: str = "") -> go.Figure:
    """Chosen columns of the table over positions, one line each, labelled with its wavelength."""
    array = as_array(table)
    _check_table(array)
    if len(wavelengths) != array.shape[1]:
        raise ValueError(f"{len(wavelengths)} wavelengths for {array.shape[1]} dimensions")
    figure = go.Figure()
    for dim in dimensions:
        if not 0 <= dim < array.shape[1]:
            raise ValueError(f"dimension {dim} is outside 0 .. {array.shape[1] - 1}")
        wave = "sin" if dim % 2 == 0 else "cos"
        figure.add_trace(
            go.Scatter(
                x=list(range(array.shape[0])),
                y=array[:, dim].tolist(),
                mode="lines",
                name=f"dim {dim} ({wave}, wavelength {wavelengths[dim]:,.0f})",
            )
        )
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "position p"}},
        yaxis={"title": {"text": "PE[p, i]"}, "range": [-1.1, 1.1]},
        height=360,
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def pe_similarity(matrix, title: str = "") -> go.Figure:
    """PE · PEᵀ: rows and columns are positions; constant along every diagonal."""
    array = as_array(matrix)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"expected a square (positions, positions) matrix, got shape {array.shape}")
    figure = go.Figure(
        go.Heatmap(
            z=array.tolist(),
            colorscale="Viridis",
            hovertemplate="positions %{y} and %{x}<br>PE·PE = %{z:.2f}<extra></extra>",
            colorbar={"title": {"text": "dot"}},
        )
    )
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "position q"}, "scaleanchor": "y"},
        yaxis={"title": {"text": "position p"}, "autorange": "reversed"},
        height=460,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def distance_profile(distances: Sequence[int], values: Sequence[float], title: str = "") -> go.Figure:
    """PE_p · PE_(p+k) against the distance k (the same for every p)."""
    if len(distances) != len(values):
        raise ValueError(f"{len(distances)} distances for {len(values)} values")
    figure = go.Figure(go.Scatter(x=list(distances), y=list(values), mode="lines+markers", marker={"size": 4}))
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "distance k = |p - q|"}},
        yaxis={"title": {"text": "PE_p · PE_q"}},
        height=300,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure


def embedding_parts(tokens: Sequence[str], parts: Mapping[str, np.ndarray], title: str = "") -> go.Figure:
    """Token vectors side by side, one heatmap per part (rows = tokens, columns = dimensions),
    on one colour scale so their sizes compare at a glance."""
    arrays = {label: as_array(array) for label, array in parts.items()}
    for label, array in arrays.items():
        if array.ndim != 2 or array.shape[0] != len(tokens):
            raise ValueError(f"{label}: shape {array.shape} does not match {len(tokens)} tokens")
    limit = max(float(np.abs(a).max(initial=0.0)) for a in arrays.values()) or 1.0
    figure = make_subplots(rows=1, cols=len(arrays), subplot_titles=list(arrays), horizontal_spacing=0.03)
    for column, (label, array) in enumerate(arrays.items(), start=1):
        figure.add_trace(
            go.Heatmap(
                z=array.tolist(),
                customdata=[[token] * array.shape[1] for token in literals(tokens)],
                hovertemplate=f"{label}<br>%{{customdata}}, dimension %{{x}}: %{{z:.2f}}<extra></extra>",
                colorscale=DIVERGING,
                zmin=-limit,
                zmax=limit,
                showscale=column == len(arrays),
            ),
            row=1,
            col=column,
        )
        figure.update_xaxes(title={"text": "dimension"}, row=1, col=column)
        figure.update_yaxes(
            token_axis(tokens, "token" if column == 1 else "")
            | {"autorange": "reversed", "showticklabels": column == 1},
            row=1,
            col=column,
        )
    figure.update_layout(
        title=literal(title), height=max(300, 120 + 26 * len(tokens)), margin={"l": 10, "r": 10, "t": 80, "b": 10}
    )
    return figure


def vector_norms(tokens: Sequence[str], norms: Mapping[str, Sequence[float]], title: str = "") -> go.Figure:
    """Grouped bars: the length (L2 norm) of each part of each token's vector."""
    figure = go.Figure()
    for label, values in norms.items():
        if len(values) != len(tokens):
            raise ValueError(f"{label}: {len(values)} norms for {len(tokens)} tokens")
        figure.add_trace(
            go.Bar(
                x=list(range(len(tokens))),
                y=list(values),
                name=label,
                customdata=literals(tokens),
                hovertemplate=f"{label}<br>%{{customdata}}: %{{y:.2f}}<extra></extra>",
            )
        )
    figure.update_layout(
        title=literal(title),
        barmode="group",
        xaxis=token_axis(tokens, "token"),
        yaxis={"title": {"text": "L2 norm"}},
        height=360,
        legend={"orientation": "h", "y": -0.3},
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure
