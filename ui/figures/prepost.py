"""Figures of the norm placement page (Pre, Post, Sandwich, OLMo-2's order; pure ``DataFrame -> go.Figure``).

Every builder draws one line per placement in the order of ``names`` (the model's own placement first): that line
is drawn wider, so the model on the sidebar stands out among its twins.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import LOG_AXIS, base_layout, f32
from ui.figures.norms import depth_axis

COLORS = {"pre": "#1f77b4", "post": "#ff7f0e", "sandwich": "#2ca02c", "post_sublayer": "#9467bd"}
SYMBOLS = {"pre": "circle", "post": "square", "sandwich": "diamond", "post_sublayer": "triangle-up"}
OWN_WIDTH, OTHER_WIDTH = 4.5, 2.5  # the model's own placement (the first of ``names``) and its twins
LOG_RATIO = 10  # the placements' largest norms differ by more than this factor: a log y axis


def differ_by_orders(*values, ratio: float = LOG_RATIO) -> bool:
    """Whether the largest positive finite values of the given series differ by more than ``ratio`` (on a linear
    axis the smaller lines would lie flat at the bottom)."""
    tops = []
    for v in values:
        v = np.asarray(v, dtype=np.float64)
        v = v[np.isfinite(v) & (v > 0)]
        if not v.size:
            return False
        tops.append(float(v.max()))
    return len(tops) >= 2 and max(tops) > ratio * min(tops)


def _line(key: str, own: bool) -> dict:
    """A placement's line and marker style (its colour and symbol; the model's own placement wider)."""
    return dict(line=dict(color=COLORS.get(key, "gray"), width=OWN_WIDTH if own else OTHER_WIDTH),
                marker=dict(symbol=SYMBOLS.get(key, "circle"), size=8 if own else 6))


def _legend_rows(fig: go.Figure, entries: int) -> None:
    """Four placements and a reference line do not fit one legend row beside the title (nor, enlarged in presenter
    mode, below it): more than three entries go in a column right of the plot, clear of the title and the ticks."""
    if entries > 3:
        fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02))


def placement_norm_lines(df: pd.DataFrame, depth_labels: list[str], names: dict[str, str], title: str,
                         x_title: str, y_title: str, sqrt_h: float | None = None, sqrt_h_name: str = "") -> go.Figure:
    """Mean residual L2 norm by depth, one line per placement.

    Args:
        df: ``analysis.prepost.placement_comparison``'s norms (columns depth 0..L and ``{placement}_norm``).
        depth_labels: L+1 tick texts ("embed", "block 1", …); names: legend name of each placement, the model's
            own first (drawn wider).
        sqrt_h: optional dotted reference line at √H, named ``sqrt_h_name`` in the legend (a label on the line
            would sit on the lines or the tick labels).
    Traces: one per entry of ``names`` (+ the √H line), y = the ``{placement}_norm`` columns as float32. The y axis
    is logarithmic when the placements' largest norms differ by more than ``LOG_RATIO`` (a trained Pre-Norm model
    reaches ~1,000 where Post-Norm stays at √H; at init, Pre-Norm's small stream against the sandwich's sums of
    normalised outputs), else linear from 0.
    """
    fig = go.Figure()
    labels = np.array(depth_labels, dtype=object)
    for k, (key, name) in enumerate(names.items()):
        fig.add_trace(go.Scatter(
            x=df["depth"].to_numpy(), y=f32(df[f"{key}_norm"]), mode="lines+markers", name=name,
            customdata=labels, hovertemplate="%{customdata}: %{y:.3f}<extra>" + name + "</extra>", **_line(key, k == 0),
        ))
    if sqrt_h is not None:
        depths = df["depth"].to_numpy()
        fig.add_trace(go.Scatter(x=[depths.min(), depths.max()], y=[sqrt_h, sqrt_h], mode="lines", name=sqrt_h_name,
                                 line=dict(dash="dot", color="gray", width=1.5), hoverinfo="skip"))
    base_layout(fig, title, x_title, y_title, height=400)
    _legend_rows(fig, len(fig.data))
    fig.update_xaxes(**depth_axis(depth_labels))
    if differ_by_orders(*(df[f"{key}_norm"] for key in names)):
        fig.update_yaxes(**LOG_AXIS, dtick="D2")  # 1, 2, 5, 10, 20, ...: a label at every step, none crowded
    else:
        fig.update_yaxes(rangemode="tozero")
    return fig


def divergence_lines(df: pd.DataFrame, depth_labels: list[str], names: dict[str, str], title: str,
                     cosine_title: str, cosine_y: str, rel_title: str, rel_y: str, x_title: str) -> go.Figure:
    """Two panels by depth: each other placement's cosine similarity (left) and relative L2 difference (right) to
    the hidden state of the model's own placement.

    Args:
        df: ``analysis.prepost.placement_comparison``'s drift (columns depth, placement, cosine, rel_l2).
        names: legend name of each placement (the first, the reference, has no rows and no line).
    Traces: for each placement of ``df`` in ``names``' order, ``[cosine, rel_l2]`` (float32; the legend entry is
    the cosine's). At depth 0 the placements share the embedding, so cosine is 1 and the relative difference 0.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=(cosine_title, rel_title), horizontal_spacing=0.12)
    labels = np.array(depth_labels, dtype=object)
    for key, name in names.items():
        part = df[df["placement"] == key].sort_values("depth")
        if part.empty:
            continue
        x = part["depth"].to_numpy()
        for col, column, fmt in ((1, "cosine", ".4f"), (2, "rel_l2", ".4f")):
            fig.add_trace(go.Scatter(x=x, y=f32(part[column]), mode="lines+markers", name=name, legendgroup=key,
                                     showlegend=col == 1, customdata=labels[x],
                                     hovertemplate="%{customdata}: %{y:" + fmt + "}<extra>" + name + "</extra>",
                                     **_line(key, False)), row=1, col=col)
    base_layout(fig, title, x_title, "", height=400)
    fig.update_layout(margin=dict(t=90))
    _legend_rows(fig, 4)
    fig.update_xaxes(**depth_axis(depth_labels, max_ticks=8))
    fig.update_yaxes(title_text=cosine_y, row=1, col=1)
    fig.update_yaxes(title_text=rel_y, rangemode="tozero", row=1, col=2)
    return fig


def gradient_norm_lines(df: pd.DataFrame, group_labels: list[str], names: dict[str, str], title: str, x_title: str,
                        y_title: str) -> go.Figure:
    """Gradient L2 norm per parameter group, one line per placement, log-scale y.

    Args:
        df: ``analysis.prepost.gradient_norms`` rows of every placement with an added ``placement`` column;
            ``layer`` runs -1 (embedding) .. L (final norm + head).
        group_labels: L+2 tick texts in layer order; names: legend name of each placement, the model's own first.
    Traces: one per entry of ``names``; x = ``layer + 1`` (0..L+1), y = ``grad_norm`` as float32 (NaN points are
    gaps).
    """
    fig = go.Figure()
    labels = np.array(group_labels, dtype=object)
    for k, (key, name) in enumerate(names.items()):
        part = df[df["placement"] == key].sort_values("layer")
        fig.add_trace(go.Scatter(
            x=part["layer"].to_numpy() + 1, y=f32(part["grad_norm"]), mode="lines+markers", name=name,
            customdata=labels, hovertemplate="%{customdata}: %{y:.4g}<extra>" + name + "</extra>", **_line(key, k == 0),
        ))
    base_layout(fig, title, x_title, y_title, height=420)
    _legend_rows(fig, len(fig.data))
    fig.update_xaxes(**depth_axis(group_labels))
    fig.update_yaxes(type="log", dtick="D2", tickformat=".2~g")
    return fig


def depth_scaling_lines(df: pd.DataFrame, names: dict[str, str], reference_c: float, reference_name: str,
                        title: str, x_title: str, y_title: str) -> go.Figure:
    """Gradient norm of the last block against the number of blocks L, one line per placement, log-log axes, with
    the reference curve ``reference_c / sqrt(L)`` (Xiong et al. 2020, Theorem 1: Pre-Norm's last layer scales so).

    Args:
        df: ``analysis.prepost.last_block_gradient_by_depth`` (columns layers, placement, grad_norm).
        names: legend name of each placement, the model's own first.
    Traces: one per entry of ``names``, then the reference; y as float32 (NaN points are gaps).
    """
    fig = go.Figure()
    for k, (key, name) in enumerate(names.items()):
        part = df[df["placement"] == key].sort_values("layers")
        fig.add_trace(go.Scatter(x=part["layers"].to_numpy(), y=f32(part["grad_norm"]), mode="lines+markers",
                                 name=name, hovertemplate="L = %{x}: %{y:.4g}<extra>" + name + "</extra>",
                                 **_line(key, k == 0)))
    layers = np.sort(df["layers"].unique()).astype(np.float64)
    fig.add_trace(go.Scatter(x=layers, y=f32(reference_c / np.sqrt(layers)), mode="lines", name=reference_name,
                             line=dict(color="gray", dash="dot", width=2),
                             hovertemplate="L = %{x}: %{y:.4g}<extra>" + reference_name + "</extra>"))
    base_layout(fig, title, x_title, y_title, height=420)
    _legend_rows(fig, len(fig.data))
    fig.update_xaxes(type="log", tickvals=layers, ticktext=[str(int(v)) for v in layers])
    fig.update_yaxes(type="log", dtick="D2", tickformat=".2~g")
    return fig
