"""Head atlas figures: every head as a cell (rows = layers, columns = heads, one panel per kind of
attention) coloured by one measure, and the pruning curve."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import literal


def head_grid(
    values: Mapping[str, np.ndarray],
    hover: Mapping[str, Sequence[Sequence[str]]],
    titles: Mapping[str, str],
    measure: str,
    colorscale: str = "Reds",
    zmin: float | None = None,
    zmax: float | None = None,
) -> go.Figure:
    """values: kind -> (layers, heads) array (NaN where there is no value); hover: the same shape of
    texts. Each cell carries an invisible marker whose customdata is [kind, layer, head] (1-based):
    clicks select markers (Streamlit does not select heatmap cells)."""
    kinds = list(values)
    for kind in kinds:
        array = np.asarray(values[kind], dtype=float)
        if array.ndim != 2 or np.shape(hover[kind]) != array.shape:
            raise ValueError(
                f"{kind}: values {array.shape} and hover texts {np.shape(hover[kind])} must be (layers, heads)"
            )
    finite = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values.values()])
    finite = finite[np.isfinite(finite)]
    low = zmin if zmin is not None else (float(finite.min()) if finite.size else 0.0)
    high = zmax if zmax is not None else (float(finite.max()) if finite.size else 1.0)
    figure = make_subplots(rows=1, cols=len(kinds), subplot_titles=[titles[k] for k in kinds], horizontal_spacing=0.06)
    for column, kind in enumerate(kinds, start=1):
        array = np.asarray(values[kind], dtype=float)
        layers, heads = array.shape
        figure.add_trace(
            go.Heatmap(
                z=[[None if np.isnan(v) else float(v) for v in row] for row in array],
                x=list(range(1, heads + 1)),
                y=list(range(1, layers + 1)),
                hoverinfo="skip",
                colorscale=colorscale,
                zmin=low,
                zmax=high,
                showscale=column == len(kinds),
                colorbar={"title": {"text": measure}},
                xgap=3,
                ygap=3,
            ),
            row=1,
            col=column,
        )
        cells = [(layer, head) for layer in range(layers) for head in range(heads)]
        figure.add_trace(
            go.Scatter(
                x=[head + 1 for _, head in cells],
                y=[layer + 1 for layer, _ in cells],
                mode="markers",
                marker={"size": 40, "symbol": "square", "opacity": 0.01, "color": "#000"},
                text=[hover[kind][layer][head] for layer, head in cells],
                customdata=[[kind, layer + 1, head + 1] for layer, head in cells],
                hovertemplate="%{text}<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=column,
        )
        figure.update_xaxes(title={"text": "head"}, dtick=1, row=1, col=column)
        figure.update_yaxes(
            title={"text": "layer" if column == 1 else ""}, dtick=1, autorange="reversed", row=1, col=column
        )
    figure.update_layout(
        height=140 + 70 * max(np.shape(v)[0] for v in values.values()), margin={"l": 10, "r": 10, "t": 50, "b": 10}
    )
    return figure


def pruning_curve(removed: Sequence[int], bleu: Sequence[float], baseline: float, title: str = "") -> go.Figure:
    """BLEU against the number of heads switched off; a dotted line 1 BLEU under the baseline."""
    if len(removed) != len(bleu) or not removed:
        raise ValueError(f"{len(removed)} points of heads removed for {len(bleu)} BLEU scores")
    figure = go.Figure(
        go.Scatter(
            x=list(removed),
            y=list(bleu),
            mode="lines+markers",
            name="BLEU",
            hovertemplate="%{x} heads off: BLEU %{y:.2f}<extra></extra>",
        )
    )
    figure.add_hline(y=baseline - 1.0, line_dash="dot", annotation_text="1 BLEU under all heads", line_color="#c53030")
    figure.update_layout(
        title=literal(title),
        xaxis={"title": {"text": "heads switched off (least important first)"}},
        yaxis={"title": {"text": "BLEU"}},
        height=340,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    )
    return figure
