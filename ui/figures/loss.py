"""Figures of the loss & masking page."""

from __future__ import annotations


import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import DENSE_TICKS, base_layout, column_tickangle, position_axis
from ui.format import finite, number
from ui.i18n import t


def _y(v: float) -> float | None:
    """A finite float, or None (a gap in the chart: masked positions get no bar, not a bar of height 0)."""
    return float(v) if finite(v) else None


def contribution_bar(df: pd.DataFrame, title: str, x_title: str, y_title: str, masked_label: str) -> go.Figure:
    """Each predicting position's share of the mean loss, ``loss_t / N`` (nats), with gaps where masked.

    Args:
        df: ``analysis.loss.loss_table`` (columns position, input_token, target_token, masked, loss,
            contribution, share).
        masked_label: hover text for masked positions.
    Returns:
        One ``go.Bar`` on integer positions with tick text ``"t: input→target"``; ``y`` is None for masked
        rows so they draw as gaps (on a light-grey band). The visible bars add up to the mean loss.
    """
    ticks = [f"{p}: {a}→{b}" for p, a, b in zip(df["position"], df["input_token"], df["target_token"])]
    y = [_y(v) for v in df["contribution"]]
    hover = [masked_label if m else t("fig.loss_share", loss=number(lo, ".4f"), share=number(s, ".1%"))
             for m, lo, s in zip(df["masked"], df["loss"], df["share"])]
    fig = go.Figure(go.Bar(
        x=df["position"].tolist(), y=y, customdata=list(zip(ticks, hover)), marker_color="#1f77b4",
        hovertemplate="%{customdata[0]}<br>%{customdata[1]}<br>" + t("fig.contribution") + "<extra></extra>",
    ))
    n = len(df)
    base_layout(fig, title, x_title, y_title, height=420 if n <= 40 else 480)
    fig.update_xaxes(**position_axis(ticks), tickangle=-45 if 6 < n <= DENSE_TICKS else column_tickangle(n),
                     range=[-0.5, max(n, 1) - 0.5])
    fig.update_layout(bargap=0.15)
    masked = df["masked"].to_numpy()
    start = None
    for i in range(n + 1):  # shade each run of masked positions so the gaps read as "masked", not "missing"
        if i < n and masked[i]:
            start = i if start is None else start
        elif start is not None:
            fig.add_vrect(x0=start - 0.5, x1=i - 0.5, fillcolor="#d3d3d3", opacity=0.35, line_width=0, layer="below")
            start = None
    return fig
