"""Figures of the next-token page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout, f32
from ui.escape import plotly
from ui.format import number
from ui.i18n import t


def topk_bar(df: pd.DataFrame, title: str, x_title: str, y_title: str) -> go.Figure:
    """Horizontal bars of the top-k next-token probabilities, rank 1 at the top, in percent.

    Args:
        df: ``analysis.next_token.next_token_table`` (columns rank, token_id, token, logit, probability).
    Returns:
        One ``go.Bar`` (orientation "h") on integer rows 0..k-1 with tick text ``"rank. token"`` (rows by
        rank, so two ids with the same display text never merge); x = probability × 100.
    """
    k = len(df)
    ticks = [plotly(f"{r}. {tok}") for r, tok in zip(df["rank"], df["token"])]
    pct = f32(df["probability"] * 100.0)
    fig = go.Figure(go.Bar(
        x=pct, y=list(range(k)), orientation="h", text=[number(p, ".3g") + ("%" if np.isfinite(p) else "") for p in pct], textposition="outside",
        customdata=list(zip(df["token_id"].tolist(), [number(v, ".3f") for v in df["logit"]], ticks)),
        hovertemplate="%{customdata[2]} (" + t("fig.token_id") + "): %{x:.3f}%<extra></extra>",
        marker_color="#2ca02c",
    ))
    base_layout(fig, title, x_title, y_title, height=max(320, 90 + 30 * k))
    fig.update_yaxes(tickmode="array", tickvals=list(range(k)), ticktext=ticks, autorange="reversed",
                     tickfont=dict(size=14))
    finite = pct[np.isfinite(pct)]
    top = float(finite.max()) if len(finite) else 1.0
    fig.update_xaxes(range=[0, top * 1.3 if top > 0 else 1.0], ticksuffix="%")
    return fig
