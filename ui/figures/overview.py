"""Figures of the overview page."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout


def parameter_bar(df: pd.DataFrame, title: str, x_title: str, y_title: str) -> go.Figure:
    """Bar chart of ``engine.analysis.parameter_table`` (columns component, params, share)."""
    fig = go.Figure(go.Bar(
        x=df["component"], y=df["params"], text=[f"{s:.1%}" for s in df["share"]], textposition="outside",
        hovertemplate="%{x}: %{y:,} (%{text})<extra></extra>",
    ))
    return base_layout(fig, title, x_title, y_title, height=380)
