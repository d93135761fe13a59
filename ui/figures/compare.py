"""Figures of a comparison (sides A and B side by side): one scale for the charts of both sides, and B / A by depth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout, f32, position_axis
from ui.figures.norms import depth_axis

RATIO_COLOR = "#6a3d9a"
HEADROOM = 0.1  # a shared y range ends this share of its span above the highest value
EQUAL_BAND = 0.1  # a B / A chart's y axis spans at least 1 ± this


def _values(fig: go.Figure, axis: str) -> list[float]:
    """The finite numbers ``fig``'s traces draw on ``axis`` ("x", "y", "y2"...)."""
    out: list[float] = []
    for trace in fig.data:
        on = (trace.xaxis or "x") if axis.startswith("x") else (trace.yaxis or "y")
        data = trace.x if axis.startswith("x") else trace.y
        if on == axis and data is not None:
            v = np.asarray(data, dtype=float).ravel()
            out.extend(v[np.isfinite(v)].tolist())
    return out


def share_axes(figs: list[go.Figure], axes: tuple[str, ...] = ("x", "y", "y2")) -> None:
    """Give the charts of the two sides one range per axis (each from 0, or below where values are negative), so
    equal values sit at the same place in both; an axis no chart has, or a single x value, is left alone."""
    for axis in axes:
        values = [v for fig in figs for v in _values(fig, axis)]
        if not values:
            continue
        lo, hi = min(min(values), 0.0) if axis.startswith("y") else min(values), max(values)
        if hi <= lo:
            continue
        pad = (hi - lo) * HEADROOM if axis.startswith("y") else 0.3
        name = ("xaxis" if axis.startswith("x") else "yaxis") + axis[1:]
        for fig in figs:
            if name in fig.layout and fig.layout[name] is not None:
                fig.layout[name].update(range=[lo - (pad if lo < 0 or axis.startswith("x") else 0), hi + pad],
                                        autorange=False)


def ratio_by_depth(table: pd.DataFrame, depth_labels: list[str], title: str, x_title: str, y_title: str) -> go.Figure:
    """B / A at each depth both sides have (``analysis.compare.norms_by_depth``'s ``ratio``), a dotted line at 1
    (equal norms); a log scale when the ratios span more than a factor 100."""
    ratio = table["ratio"].to_numpy(dtype=float)
    fig = go.Figure(go.Scatter(x=np.arange(len(ratio)), y=f32(ratio), mode="lines+markers", name=y_title,
                               line=dict(color=RATIO_COLOR, width=3), customdata=np.array(depth_labels, dtype=object),
                               hovertemplate="%{customdata}: %{y:.4g}<extra></extra>"))
    fig.add_hline(y=1.0, line=dict(dash="dot", color="gray", width=1))
    base_layout(fig, title, x_title, y_title, height=360)
    fig.update_xaxes(**depth_axis(depth_labels))
    finite = ratio[np.isfinite(ratio) & (ratio > 0)]
    if finite.size and finite.max() / finite.min() > 100:
        fig.update_yaxes(type="log")
    elif finite.size:  # at least 0.9 to 1.1 around the line at 1: rounding noise (0.99999994) is not drawn as a change
        lo, hi = min(float(finite.min()), 1 - EQUAL_BAND), max(float(finite.max()), 1 + EQUAL_BAND)
        pad = (hi - lo) * HEADROOM
        fig.update_yaxes(range=[max(lo - pad, 0.0), hi + pad], autorange=False)
    return fig


# ---- loss, next token, overview, lens
UP, DOWN = "#b2182b", "#2166ac"  # the ends of the diverging scale (ui.figures.common.DIVERGING): above / below


def union_range(figs: list[go.Figure], axis: str = "xaxis") -> None:
    """Give every chart the range that holds all their own ranges on ``axis`` ("xaxis", "yaxis"...): the charts
    of two sides then place equal values at the same place (a chart without a set range is left alone)."""
    ranges = [fig.layout[axis].range for fig in figs if fig.layout[axis].range is not None]
    if not ranges:
        return
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    for fig in figs:
        fig.layout[axis].update(range=[lo, hi], autorange=False)


def cap_height(figs: list[go.Figure], px: int) -> None:
    """At most ``px`` tall each (a compared chart in presenter mode stays within one screen)."""
    for fig in figs:
        if (fig.layout.height or 0) > px:
            fig.update_layout(height=px)


def thin_ticks(figs: list[go.Figure], most: int, axis: str = "xaxis") -> None:
    """At most about ``most`` tick labels on ``axis`` (every n-th of the figure's own, from the first): a chart at
    half the width holds half the labels."""
    for fig in figs:
        vals, text = fig.layout[axis].tickvals, fig.layout[axis].ticktext
        if vals is not None and text is not None and len(vals) > most:
            step = -(-len(vals) // most)
            fig.layout[axis].update(tickvals=list(vals)[::step], ticktext=list(text)[::step])


def ratio_by_position(table: pd.DataFrame, labels: list[str], title: str, x_title: str, y_title: str) -> go.Figure:
    """B / A at each position both sides have (``analysis.compare.loss_by_position``'s ``ratio``) as bars from 1,
    red where B is higher, blue where lower, a gap where either side masks the target; a dotted line at 1 (equal)
    and a log scale when the ratios span more than a factor 100. ``labels``: one tick per position."""
    ratio = table["ratio"].to_numpy(dtype=float)
    finite = ratio[np.isfinite(ratio) & (ratio > 0)]
    log = bool(finite.size) and finite.max() / finite.min() > 100
    shown = np.where(np.isfinite(ratio), ratio, np.nan)
    fig = go.Figure(go.Bar(
        x=np.arange(len(ratio)), y=f32(shown - (0 if log else 1)), base=None if log else 1.0,
        marker_color=[UP if r > 1 else DOWN for r in np.nan_to_num(ratio, nan=1.0)],
        customdata=np.array([[lab, f"{r:.4g}" if np.isfinite(r) else "—"] for lab, r in zip(labels, ratio)], dtype=object),
        hovertemplate="%{customdata[0]}: %{customdata[1]}<extra></extra>"))
    fig.add_hline(y=1.0, line=dict(dash="dot", color="gray", width=1))
    base_layout(fig, title, x_title, y_title, height=340)
    fig.update_xaxes(**position_axis(labels), range=[-0.5, max(len(ratio), 1) - 0.5])
    if log:
        fig.update_yaxes(type="log")
    return fig


def change_bars(table: pd.DataFrame, labels: list[str], title: str, x_title: str, y_title: str) -> go.Figure:
    """A − B of each row of ``table`` (its ``change`` column, a probability: drawn in percentage points) as
    horizontal bars, the first row at the top, red where A is higher, blue where B is, on an axis centred at zero.
    ``labels``: one tick per row (token text, already escaped for Plotly)."""
    pp = f32(table["change"].to_numpy(dtype=float) * 100.0)
    n = len(pp)
    finite = np.abs(pp[np.isfinite(pp)])
    limit = float(finite.max()) * 1.15 if finite.size and finite.max() > 0 else 1.0
    fig = go.Figure(go.Bar(
        x=pp, y=list(range(n)), orientation="h", marker_color=[UP if v > 0 else DOWN for v in np.nan_to_num(pp)],
        customdata=np.array([[lab, f"{a:.3%}", f"{b:.3%}"] for lab, a, b in zip(labels, table["a"], table["b"])],
                            dtype=object),
        hovertemplate="%{customdata[0]}: A %{customdata[1]}, B %{customdata[2]} (%{x:+.3f})<extra></extra>"))
    fig.add_vline(x=0.0, line=dict(color="gray", width=1))
    base_layout(fig, title, x_title, y_title, height=max(300, 90 + 26 * n))
    fig.update_yaxes(tickmode="array", tickvals=list(range(n)), ticktext=labels, autorange="reversed")
    fig.update_xaxes(range=[-limit, limit], zeroline=False, exponentformat="none")  # no "40µ" on tiny changes
    return fig


SIDE_COLORS = {"a": "#1f77b4", "b": "#d62728"}


def relative_depth_lines(table: pd.DataFrame, names: dict[str, str], title: str, x_title: str,
                         y_title: str) -> go.Figure:
    """The lens probability of each side's final prediction against relative depth (``analysis.compare.
    lens_by_relative_depth``): one line per side from the embedding (0) to the output (1), a filled marker where
    the final prediction is the lens's top token, an open one where it is not; y on a log scale up to 1."""
    fig = go.Figure()
    for side, rows in table.groupby("side", sort=False):
        top = rows["top"].to_numpy(dtype=bool)
        fig.add_trace(go.Scatter(
            x=f32(rows["relative"]), y=f32(rows["p_final"]), mode="lines+markers", name=names[side],
            line=dict(color=SIDE_COLORS[side], width=3),
            marker=dict(size=9, symbol=["circle" if x else "circle-open" for x in top], color=SIDE_COLORS[side]),
            customdata=np.stack([rows["depth"].to_numpy(), rows["rank_final"].to_numpy()], axis=-1),
            hovertemplate=names[side] + " · %{customdata[0]}: %{y:.3f} (rank %{customdata[1]})<extra></extra>"))
    base_layout(fig, title, x_title, y_title, height=340)
    fig.update_xaxes(range=[-0.03, 1.03], tickformat=".0%")
    p = table["p_final"].to_numpy(dtype=float)
    low = p[np.isfinite(p) & (p > 0)]
    # a log axis: an early depth's p(final) is often a thousandth of a late one's (a random model's: all tiny)
    fig.update_yaxes(type="log", range=[np.floor(np.log10(low.min())) if low.size else -6, 0.05], exponentformat="power")
    return fig


# ---- head roles, rope, interventions, experts
from analysis.compare import symmetric_limit  # noqa: E402  (this block's own imports: kept apart for merges)
from ui.figures.common import DIVERGING  # noqa: E402
from ui.figures.heads import layers_heads_heatmap  # noqa: E402
from ui.format import cells  # noqa: E402

PRESENTER_COMPARE_PX = 440  # a compared chart's height before presenter mode grows it by a quarter (~550 px):
# with its sentence it stays within one 1280 x 720 screen


def same_height(figs: list[go.Figure], at_most: int | None = None) -> None:
    """Give the charts of the two sides one height (the taller's, at most ``at_most`` px), so that rows of equal
    depth line up across the columns."""
    height = max((fig.layout.height or 450 for fig in figs), default=None)
    for fig in figs:
        fig.update_layout(height=min(height, at_most) if at_most else height)


def difference_grid(diff: np.ndarray, row_labels: list[str], title: str, x_title: str, y_title: str,
                    colorbar_title: str, col_labels: list[str] | None = None) -> go.Figure:
    """A − B of a layers x heads score (``analysis.compare.grid_difference``) on the diverging scale centred at 0,
    ``-m..m`` with ``m`` its largest ``|difference|``; row ``i`` labelled ``row_labels[i]`` (A's layer, or "A's / B's"
    where the depths differ), head 1..nh across, or column ``j`` labelled ``col_labels[j]`` (positions)."""
    limit = symmetric_limit(diff) or 1e-9
    fig = layers_heads_heatmap(diff, DIVERGING, limit, title, x_title, y_title, colorbar_title)
    n = diff.shape[0]
    if fig.data[0].text is not None:  # differences can be tiny: two significant digits, not two decimals
        fig.data[0].update(text=cells(diff, ".2g"))
    cols = col_labels or [str(j + 1) for j in range(diff.shape[1])]
    where = np.array([[[r, c] for c in cols] for r in row_labels], dtype=object)  # (rows, cols, 2)
    fig.data[0].update(zmin=-limit, zmax=limit, zmid=0.0, customdata=where,
                       hovertemplate=f"{y_title} %{{customdata[0]}}, {x_title} %{{customdata[1]}}: %{{z:.3g}}"
                                     "<extra></extra>")
    fig.update_yaxes(tickmode="array", tickvals=np.arange(1, n + 1), ticktext=row_labels)
    if col_labels:
        fig.update_xaxes(tickmode="array", tickvals=np.arange(1, len(cols) + 1), ticktext=cols)
    return fig


def share_log_axis(figs: list[go.Figure], axis: str = "y") -> None:
    """One range for a log axis of the two sides' charts (Plotly reads a log range in powers of ten): from the
    smallest positive value to the largest both draw, a twentieth of the span beyond each."""
    values = [v for fig in figs for v in _values(fig, axis) if v > 0]
    if not values:
        return
    lo, hi = np.log10(min(values)), np.log10(max(values))
    pad = max(hi - lo, 1.0) * 0.05
    name = ("xaxis" if axis.startswith("x") else "yaxis") + axis[1:]
    for fig in figs:
        fig.layout[name].update(range=[lo - pad, hi + pad], autorange=False)


def difference_line(table: pd.DataFrame, x: str, title: str, x_title: str, y_title: str,
                    bars: bool = False) -> go.Figure:
    """A − B (``table["difference"]``) against ``table[x]``, with a line at 0 (no difference); ``bars``: one bar
    per x (experts, not a continuum), red above 0, blue below."""
    y = f32(table["difference"])
    style = dict(marker_color=np.where(y > 0, "#d62728", "#1f77b4")) if bars else \
        dict(mode="lines+markers", line=dict(color=RATIO_COLOR, width=3), marker=dict(size=5))
    fig = go.Figure((go.Bar if bars else go.Scatter)(x=table[x].to_numpy(), y=y, name=y_title, **style,
                                                     hovertemplate=f"{x_title} %{{x}}: %{{y:.4g}}<extra></extra>"))
    fig.add_hline(y=0.0, line=dict(dash="dot", color="gray", width=1))
    base_layout(fig, title, x_title, y_title, height=360)
    if bars:
        fig.update_xaxes(tick0=1, dtick=1)
    return fig
