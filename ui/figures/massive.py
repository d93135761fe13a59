"""Figures of the massive-activations and attention-sink view (pure builders, no Streamlit).

References: Sun et al. 2024, "Massive Activations in Large Language Models"; Xiao et al. 2023, "Efficient
Streaming Language Models with Attention Sinks".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import LOG_AXIS, base_layout, f32
from ui.figures.heads import layers_heads_heatmap
from ui.format import number

MAX_COLOR = "#d62728"
MEDIAN_COLOR = "#1f77b4"


def massive_chart(df: pd.DataFrame, depth_labels: list[str], title: str, x_title: str, y_title: str,
                  max_name: str, median_name: str, hover_where: str) -> go.Figure:
    """Largest |h| and median |h| of the residual stream per depth (log y axis).

    Args:
        df: ``analysis.massive.massive_activations`` (depth, max_abs, position, dim, median_abs, ratio...).
        depth_labels: one tick text per depth ("embed", "block 1", ...).
        hover_where: a format string with ``{position}``, ``{dim}`` and ``{ratio}`` for the hover text.
    """
    depths = df["depth"].to_numpy()
    where = [hover_where.format(position=int(p), dim=int(d), ratio=_ratio(r))
             for p, d, r in zip(df["position"], df["dim"], df["ratio"])]
    fig = go.Figure([
        go.Scatter(x=depths, y=f32(df["max_abs"]), mode="lines+markers", name=max_name, text=where,
                   line=dict(color=MAX_COLOR, width=2), hovertemplate="%{y:.4g}<br>%{text}<extra>" + max_name + "</extra>"),
        go.Scatter(x=depths, y=f32(df["median_abs"]), mode="lines+markers", name=median_name,
                   line=dict(color=MEDIAN_COLOR, width=2), hovertemplate="%{y:.4g}<extra>" + median_name + "</extra>"),
    ])
    base_layout(fig, title, x_title, y_title, height=420)
    fig.update_yaxes(**LOG_AXIS)
    n = len(depth_labels)
    step = max(1, -(-n // 16))
    ticks = list(range(0, n, step))
    fig.update_xaxes(tickmode="array", tickvals=ticks, ticktext=[depth_labels[i] for i in ticks])
    return fig


def _ratio(r: float) -> str:
    return "∞" if r == np.inf else number(r, ",.0f")  # max / median over a zero median


def sink_heatmap(shares: np.ndarray, title: str, x_title: str, y_title: str, colorbar_title: str) -> go.Figure:
    """Layers x heads heatmap of the share of attention on the first token (0..1), layer 1 at the top."""
    return layers_heads_heatmap(np.asarray(shares), "Blues", 1.0, title, x_title, y_title, colorbar_title)
