"""Figures of the overview page."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import DIVERGING, HEATMAP_MAX_TOKENS, base_layout, f32, position_axis
from ui.i18n import t

HIGHLIGHT, MUTED = "#d97706", "#93c5fd"


def parameter_bar(df: pd.DataFrame, title: str, x_title: str, y_title: str) -> go.Figure:
    """Bar chart of ``analysis.anatomy.parameter_table`` (columns component, params, share)."""
    names = [t(f"fig.component.{c}") for c in df["component"]]
    hover = [n if n == c or " " in c else f"{n} ({c})" for n, c in zip(names, df["component"])]  # + module name
    fig = go.Figure(go.Bar(
        x=list(range(len(df))), y=df["params"], text=[f"{s:.1%}" for s in df["share"]], textposition="outside",
        customdata=hover, hovertemplate="%{customdata}: %{y:,} (%{text})<extra></extra>",
    ))
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(df))), ticktext=names)
    return base_layout(fig, title, x_title, y_title, height=380)


def step_norm_bar(walk: pd.DataFrame, step: int, labels: list[str], title: str, x_title: str, y_title: str) -> go.Figure:
    """Mean L2 norm after each step of the block walk-through, the current step highlighted.

    ``walk`` is ``analysis.anatomy.shape_walkthrough``; steps without a tensor (no norm in Post-Norm) are gaps.
    """
    colors = [HIGHLIGHT if s == step else MUTED for s in walk["step"]]
    fig = go.Figure(go.Bar(x=list(walk["step"]), y=f32(walk["mean_norm"]), marker_color=colors,
                           hovertemplate="%{customdata}: %{y:.4f}<extra></extra>", customdata=labels))
    fig.update_xaxes(tickmode="array", tickvals=list(walk["step"]), tickangle=-25,
                     ticktext=[f"{s}. {n}" for s, n in zip(walk["step"], labels)])
    return base_layout(fig, title, x_title, y_title, height=340)


def activation_heatmap(act: pd.DataFrame, tick_labels: list[str], title: str, x_title: str, y_title: str,
                       value_title: str = "value") -> go.Figure:
    """Heatmap of one activation ``[T, H]`` (rows = positions top to bottom, columns = hidden units).

    Rows are capped at ``HEATMAP_MAX_TOKENS``; a diverging colour scale is centred at 0.
    """
    act = act.iloc[:HEATMAP_MAX_TOKENS]
    z = f32(act.to_numpy())
    fig = go.Figure(go.Heatmap(z=z, x=list(range(z.shape[1])), y=list(range(z.shape[0])), colorscale=DIVERGING,
                               zmid=0, colorbar=dict(title=value_title),
                               hovertemplate=t("fig.pos_unit") + ": %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", **position_axis(tick_labels[: z.shape[0]]))
    if z.shape[1] <= 32:
        fig.update_xaxes(dtick=1)  # integer hidden units, no half-unit ticks
    return base_layout(fig, title, x_title, y_title, height=max(300, min(700, 26 * z.shape[0] + 140)))
