"""Pure plotly builders for a model card: training curves per epoch."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.axes import literal

LOSSES = {"train_loss": "train loss", "dev_loss": "dev loss"}
SCORES = {"dev_bleu": "dev BLEU", "dev_chrf": "dev chrF"}


def training_curves(history: pd.DataFrame, title: str = "") -> go.Figure:
    """Loss (left) and dev scores (right) against the epoch; columns that are missing are skipped."""
    if "epoch" not in history.columns or history.empty:
        raise ValueError("the history needs an 'epoch' column and at least one row")
    figure = make_subplots(rows=1, cols=2, subplot_titles=["loss", "dev scores"])
    for col, series in enumerate((LOSSES, SCORES), start=1):
        for column, label in series.items():
            if column in history.columns and history[column].notna().any():
                figure.add_trace(
                    go.Scatter(
                        x=history["epoch"].tolist(), y=history[column].tolist(), mode="lines+markers", name=label
                    ),
                    row=1,
                    col=col,
                )
        figure.update_xaxes(title={"text": "epoch"}, dtick=1 if len(history) <= 30 else None, row=1, col=col)
    figure.update_layout(title=literal(title), height=340, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return figure
