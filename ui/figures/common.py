"""Shared figure styling: fonts that render Chinese, float32 arrays, axis helpers."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

# Noto CJK first so Chinese labels never fall back to tofu boxes (fonts-noto-cjk in CI and on servers).
FONT_FAMILY = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, sans-serif"
CELL_TEXT_MAX_TOKENS = 24  # per-cell text on heatmaps only up to this many tokens (slow and unreadable above)
HEATMAP_MAX_TOKENS = 128  # tokens drawn on a heatmap axis at most


def base_layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int = 420) -> go.Figure:
    """Apply the common title, axis titles, font and margins; returns the same figure."""
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left"),
        font=dict(family=FONT_FAMILY, size=13),
        height=height,
        margin=dict(l=60, r=20, t=60, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0),
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def f32(values) -> np.ndarray:
    """A float32 numpy array (half the bytes of float64 in the page payload)."""
    return np.asarray(values, dtype=np.float32)


def position_axis(labels: list[str]) -> dict:
    """Axis settings that plot on integer positions and show token text as tick labels.

    Plotting on positions (not on token strings) keeps repeated tokens ("the ... the") as separate rows and
    columns; Plotly would merge identical category labels.
    """
    n = len(labels)
    step = max(1, n // 40)  # thin the ticks on long inputs so labels do not overlap
    ticks = list(range(0, n, step))
    return dict(tickmode="array", tickvals=ticks, ticktext=[labels[i] for i in ticks])
