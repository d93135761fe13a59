"""Figures of the RoPE page (pure ``DataFrame -> go.Figure`` builders; every text comes in translated)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import DIVERGING, LOG_AXIS, base_layout, f32, legend_under_title

CIRCLE_POINTS = 121  # the unit circle drawn behind each plane's path
PATH_COLOR = "#636efa"
CIRCLE_COLOR = "rgba(120, 120, 120, 0.45)"
BASE_COLORS = ("#636efa", "#ef553b")  # the global base, then Gemma 3's local one
MEAN_COLOR = "#d62728"
BAND_COLOR = "rgba(214, 39, 40, 0.15)"


def rotation_chart(df: pd.DataFrame, plane_titles: list[str], title: str, position_title: str,
                   hover: str) -> go.Figure:
    """One panel per plane: the rotated pair (x, y) at positions 0 .. P as dots joined in order, coloured by the
    position, on the unit circle (scaled by the radius the engine gives it: YaRN's factor).

    Args:
        df: ``analysis.rope.rotation_path`` (plane, position, x, y, angle, turns, theta_i).
        plane_titles: one title per plane (under its panel, as its x axis title: a title above the panels would
            meet the figure's title when presenter mode wraps it), in the order of ``df``'s planes.
        position_title: the colour bar's title; hover: the hover template (``%{customdata[0]}`` = position m,
            ``[1]`` = angle m·θ_i in radians, ``[2]`` = turns, ``[3]`` and ``[4]`` = the plane's two dimensions).
    Returns:
        Per plane two traces: the circle, then the path (x, y float32).
    """
    planes = list(dict.fromkeys(df["plane"]))
    fig = make_subplots(rows=1, cols=len(planes), horizontal_spacing=0.08)
    last = int(df["position"].max())
    radius = float(np.hypot(df["x"], df["y"]).max()) or 1.0
    circle = np.linspace(0, 2 * np.pi, CIRCLE_POINTS)
    for col, plane in enumerate(planes, start=1):
        part = df[df["plane"] == plane]
        fig.add_trace(go.Scatter(x=f32(radius * np.cos(circle)), y=f32(radius * np.sin(circle)), mode="lines",
                                 line=dict(color=CIRCLE_COLOR, width=1), hoverinfo="skip", showlegend=False),
                      row=1, col=col)
        fig.add_trace(go.Scatter(
            x=f32(part["x"]), y=f32(part["y"]), mode="lines+markers", showlegend=False,
            line=dict(color="rgba(99, 110, 250, 0.35)", width=1),
            marker=dict(size=9, color=part["position"].to_numpy(), colorscale="Viridis", cmin=0, cmax=max(last, 1),
                        showscale=col == len(planes),
                        colorbar=dict(title=dict(text=position_title, side="right"), thickness=14)),
            customdata=np.stack([part["position"], part["angle"], part["turns"], part["plane"], part["partner"]], axis=-1),
            hovertemplate=hover + "<extra></extra>"), row=1, col=col)
    lim = 1.15 * radius
    base_layout(fig, title, "", "", height=420)
    ticks = [-1, 0, 1] if radius <= 1.05 else None
    for col, name in enumerate(plane_titles, start=1):
        anchor = "x" if col == 1 else f"x{col}"
        fig.update_xaxes(range=[-lim, lim], zeroline=True, title_text=name, tickvals=ticks, row=1, col=col)
        fig.update_yaxes(range=[-lim, lim], zeroline=True, scaleanchor=anchor, scaleratio=1, tickvals=ticks,
                         row=1, col=col)
    return fig


def wavelength_chart(df: pd.DataFrame, base_names: list[str], title: str, x_title: str, y_title: str,
                     context: int, context_name: str, input_len: int, input_name: str, hover: str) -> go.Figure:
    """Each plane's wavelength 2π/θ_i (tokens, log axis), one line per RoPE base, with the context length and the
    input's length as horizontal lines.

    Args:
        df: ``analysis.rope.wavelengths`` (base, plane, theta_i, wavelength, turns).
        base_names: one legend name per base, in the order of ``df``'s bases.
        hover: template (``%{x}`` plane, ``%{y}`` wavelength, ``%{customdata[0]}`` θ_i, ``[1]`` turns in the context).
    Returns:
        One trace per base (x = plane, y = wavelength float32), then the context line and the input line.
    """
    fig = go.Figure()
    for (base, part), name, color in zip(df.groupby("base", sort=False), base_names, BASE_COLORS * 4):
        fig.add_trace(go.Scatter(x=part["plane"].to_numpy(), y=f32(part["wavelength"]), mode="lines+markers",
                                 name=name, line=dict(color=color, width=2),
                                 customdata=np.stack([part["theta_i"], part["turns"]], axis=-1),
                                 hovertemplate=hover + "<extra>" + name + "</extra>"))
    planes = df["plane"].to_numpy()
    for value, name, dash in ((context, context_name, "dash"), (input_len, input_name, "dot")):
        fig.add_trace(go.Scatter(x=[planes.min(), planes.max()], y=[value, value], mode="lines", name=name,
                                 line=dict(color="#444" if dash == "dash" else "#2ca02c", width=2, dash=dash),
                                 hovertemplate=name + "<extra></extra>"))
    base_layout(fig, title, x_title, y_title, height=420)
    fig.update_yaxes(**LOG_AXIS)
    fig.update_xaxes(zeroline=False)
    # inside the plot, top left: short wavelengths (the first planes) sit low there, so the corner is empty
    fig.update_layout(legend=dict(orientation="v", x=0.01, y=0.99, xanchor="left", yanchor="top",
                                  bgcolor="rgba(255, 255, 255, 0.8)"))
    return fig


def relative_heatmap(df: pd.DataFrame, title: str, x_title: str, y_title: str, colorbar_title: str,
                     hover: str) -> go.Figure:
    """The score q_m · k_n of one rotated random pair over positions m (rows) and n (columns): a heatmap whose
    every diagonal (one distance m − n) has a single colour when the score depends only on the distance.

    Args:
        df: ``analysis.rope.relative_check`` (m, n, distance, score).
        hover: template (``%{y}`` m, ``%{x}`` n, ``%{z}`` score, ``%{customdata}`` distance).
    Returns:
        One heatmap trace, z[m, n] float32.
    """
    wide = df.pivot(index="m", columns="n", values="score").sort_index().sort_index(axis=1)  # (N, N)
    dist = np.subtract.outer(wide.index.to_numpy(), wide.columns.to_numpy())  # (N, N)
    lim = float(np.abs(wide.to_numpy()).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=f32(wide.to_numpy()), x=wide.columns.to_numpy(), y=wide.index.to_numpy(),
                               colorscale=DIVERGING, zmin=-lim, zmax=lim, customdata=dist,
                               colorbar=dict(title=dict(text=colorbar_title, side="right")),
                               hovertemplate=hover + "<extra></extra>"))
    base_layout(fig, title, x_title, y_title, height=460)
    fig.update_yaxes(autorange="reversed", scaleanchor="x", scaleratio=1, constrain="domain")
    fig.update_xaxes(constrain="domain")
    return fig


def distance_chart(df: pd.DataFrame, title: str, x_title: str, y_title: str, mean_name: str, band_name: str,
                   hover: str) -> go.Figure:
    """A head's mean score against the distance m − n, with the band from the lowest to the highest pair.

    Args:
        df: ``analysis.rope.head_scores_by_distance`` (distance, mean, min, max, pairs).
        hover: template for the mean (``%{x}`` distance, ``%{y}`` mean, ``%{customdata}`` pairs).
    Returns:
        Traces: the band's upper edge (max), its lower edge (min, filled to the upper), then the mean line.
    """
    x = df["distance"].to_numpy()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=f32(df["max"]), mode="lines", line=dict(width=0), showlegend=False,
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=x, y=f32(df["min"]), mode="lines", line=dict(width=0), fill="tonexty",
                             fillcolor=BAND_COLOR, name=band_name, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=x, y=f32(df["mean"]), mode="lines+markers", name=mean_name,
                             line=dict(color=MEAN_COLOR, width=3), marker=dict(size=5),
                             customdata=df["pairs"].to_numpy(), hovertemplate=hover + "<extra></extra>"))
    base_layout(fig, title, x_title, y_title, height=420)
    fig.add_hline(y=0, line=dict(color="#888", width=1))
    legend_under_title(fig)  # a phone: the legend wraps below the title, never onto it
    return fig
