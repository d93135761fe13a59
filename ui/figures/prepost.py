"""Figures of the Pre-Norm vs Post-Norm page (pure ``DataFrame -> go.Figure`` builders)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import LOG_AXIS, base_layout, f32
from ui.figures.norms import depth_axis

COLORS = {"pre": "#1f77b4", "post": "#ff7f0e"}
LOG_RATIO = 10  # the two placements' largest norms differ by more than this factor: a log y axis


def differ_by_orders(a, b, ratio: float = LOG_RATIO) -> bool:
    """Whether the largest positive finite values of ``a`` and ``b`` differ by more than ``ratio`` (on a linear
    axis the smaller line would lie flat at the bottom)."""
    tops = []
    for v in (a, b):
        v = np.asarray(v, dtype=np.float64)
        v = v[np.isfinite(v) & (v > 0)]
        if not v.size:
            return False
        tops.append(float(v.max()))
    return max(tops) > ratio * min(tops)


def placement_norm_lines(df: pd.DataFrame, depth_labels: list[str], names: dict[str, str], title: str,
                         x_title: str, y_title: str, sqrt_h: float | None = None, sqrt_h_name: str = "") -> go.Figure:
    """Mean residual L2 norm by depth for both placements (two lines).

    Args:
        df: ``analysis.prepost.placement_divergence`` (columns depth 0..L, pre_norm, post_norm, ...).
        depth_labels: L+1 tick texts ("embed", "block 1", …); names: legend name for "pre" and "post".
        sqrt_h: optional dotted reference line at √H, named ``sqrt_h_name`` in the legend (a label on the line
            would sit on the lines or the tick labels).
    Traces: ``[pre, post]`` (+ the √H line), y = the ``pre_norm`` / ``post_norm`` columns as float32. The y axis
    is logarithmic when the two placements differ by more than ``LOG_RATIO`` (a trained Pre-Norm model reaches
    ~1,000 where Post-Norm stays at √H), else linear from 0.
    """
    fig = go.Figure()
    labels = np.array(depth_labels, dtype=object)
    for key in ("pre", "post"):
        fig.add_trace(go.Scatter(
            x=df["depth"].to_numpy(), y=f32(df[f"{key}_norm"]), mode="lines+markers", name=names[key],
            line=dict(color=COLORS[key], width=3), customdata=labels,
            hovertemplate="%{customdata}: %{y:.3f}<extra>" + names[key] + "</extra>",
        ))
    if sqrt_h is not None:
        depths = df["depth"].to_numpy()
        fig.add_trace(go.Scatter(x=[depths.min(), depths.max()], y=[sqrt_h, sqrt_h], mode="lines", name=sqrt_h_name,
                                 line=dict(dash="dot", color="gray", width=1.5), hoverinfo="skip"))
    base_layout(fig, title, x_title, y_title, height=400)
    fig.update_xaxes(**depth_axis(depth_labels))
    if differ_by_orders(df["pre_norm"], df["post_norm"]):
        fig.update_yaxes(**LOG_AXIS, dtick="D2")  # 1, 2, 5, 10, 20, ...: a label at every step, none crowded
    else:
        fig.update_yaxes(rangemode="tozero")
    return fig


def divergence_lines(df: pd.DataFrame, depth_labels: list[str], title: str, cosine_title: str, cosine_y: str,
                     rel_title: str, rel_y: str, x_title: str) -> go.Figure:
    """Two panels by depth: cosine similarity (left) and relative L2 difference (right) of the hidden states.

    Args:
        df: ``analysis.prepost.placement_divergence`` (columns depth, cosine, rel_l2).
    Traces: ``[cosine, rel_l2]`` (float32). At depth 0 the placements share the embedding, so cosine is 1 and
    the relative difference 0.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=(cosine_title, rel_title), horizontal_spacing=0.12)
    labels = np.array(depth_labels, dtype=object)
    x = df["depth"].to_numpy()
    fig.add_trace(go.Scatter(x=x, y=f32(df["cosine"]), mode="lines+markers", name=cosine_y, showlegend=False,
                             line=dict(color="#2ca02c", width=3), customdata=labels,
                             hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=x, y=f32(df["rel_l2"]), mode="lines+markers", name=rel_y, showlegend=False,
                             line=dict(color="#9467bd", width=3), customdata=labels,
                             hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"), row=1, col=2)
    base_layout(fig, title, x_title, "", height=400)
    fig.update_layout(margin=dict(t=90))
    fig.update_xaxes(**depth_axis(depth_labels, max_ticks=8))
    fig.update_yaxes(title_text=cosine_y, row=1, col=1)
    fig.update_yaxes(title_text=rel_y, rangemode="tozero", row=1, col=2)
    return fig


def gradient_norm_lines(df: pd.DataFrame, group_labels: list[str], names: dict[str, str], title: str, x_title: str,
                        y_title: str) -> go.Figure:
    """Gradient L2 norm per parameter group for both placements, log-scale y.

    Args:
        df: ``analysis.prepost.gradient_norms`` rows for both placements with an added ``placement`` column
            ("pre"/"post"); ``layer`` runs -1 (embedding) .. L (final norm + head).
        group_labels: L+2 tick texts in layer order; names: legend name for "pre" and "post".
    Traces: ``[pre, post]``; x = ``layer + 1`` (0..L+1), y = ``grad_norm`` as float32 (NaN points are gaps).
    """
    fig = go.Figure()
    labels = np.array(group_labels, dtype=object)
    for key in ("pre", "post"):
        part = df[df["placement"] == key].sort_values("layer")
        fig.add_trace(go.Scatter(
            x=part["layer"].to_numpy() + 1, y=f32(part["grad_norm"]), mode="lines+markers", name=names[key],
            line=dict(color=COLORS[key], width=3), customdata=labels,
            hovertemplate="%{customdata}: %{y:.4g}<extra>" + names[key] + "</extra>",
        ))
    base_layout(fig, title, x_title, y_title, height=420)
    fig.update_xaxes(**depth_axis(group_labels))
    fig.update_yaxes(type="log", dtick="D2", tickformat=".2~g")
    return fig


def depth_scaling_lines(df: pd.DataFrame, names: dict[str, str], reference_c: float, reference_name: str,
                        title: str, x_title: str, y_title: str) -> go.Figure:
    """Gradient norm of the last block against the number of blocks L, both placements, log-log axes, with the
    reference curve ``reference_c / sqrt(L)`` (Xiong et al. 2020, Theorem 1: Pre-Norm's last layer scales so).

    Args:
        df: ``analysis.prepost.last_block_gradient_by_depth`` (columns layers, placement, grad_norm).
    Traces: ``[pre, post, reference]``; y as float32 (NaN points are gaps).
    """
    fig = go.Figure()
    for key in ("pre", "post"):
        part = df[df["placement"] == key].sort_values("layers")
        fig.add_trace(go.Scatter(x=part["layers"].to_numpy(), y=f32(part["grad_norm"]), mode="lines+markers",
                                 name=names[key], line=dict(color=COLORS[key], width=3),
                                 hovertemplate="L = %{x}: %{y:.4g}<extra>" + names[key] + "</extra>"))
    layers = np.sort(df["layers"].unique()).astype(np.float64)
    fig.add_trace(go.Scatter(x=layers, y=f32(reference_c / np.sqrt(layers)), mode="lines", name=reference_name,
                             line=dict(color="gray", dash="dot", width=2),
                             hovertemplate="L = %{x}: %{y:.4g}<extra>" + reference_name + "</extra>"))
    base_layout(fig, title, x_title, y_title, height=420)
    fig.update_xaxes(type="log", tickvals=layers, ticktext=[str(int(v)) for v in layers])
    fig.update_yaxes(type="log", dtick="D2", tickformat=".2~g")
    return fig
