"""Figures of the Training lab: loss curves, gradient norms per layer over the steps (log colour), the
Pre-vs-Post race, and the "same slot in the previous line" head map.

Inputs are the tidy DataFrames of ``analysis`` (``training_history``, ``layer_grad_history``,
``layer_grad_profile``, ``slot_attention_table``); layers and heads arrive 0-based and are drawn 1-based.
Gradient norms span orders of magnitude, so heatmaps colour ``log10(norm)`` with tick labels in the original
units and hover text with the exact value; a zero or non-finite norm is a NaN cell (drawn empty).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import base_layout, f32
from ui.format import cells, finite
from ui.i18n import t

COLORS = {"train": "#1f77b4", "val": "#d62728", "pre": "#1f77b4", "post": "#ff7f0e"}
GRAD_SCALE = "Viridis"


def _finite(values) -> list[float | None]:
    """Floats, with NaN/Inf/None as None (a gap in a line, never a plotted zero)."""
    return [float(v) if finite(v) else None for v in values]


def _log10(values: np.ndarray) -> np.ndarray:
    """log10 of positive finite values; NaN for zero, negative or non-finite values."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isfinite(v) & (v > 0), np.log10(np.where(v > 0, v, 1.0)), np.nan)
    return out


def _log_colorbar(lo: float, hi: float, title: str) -> dict:
    """Colour bar of a log10 colour scale, ticked at powers of ten (and 1-2-5 steps on short ranges)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return dict(title=dict(text=title))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    ticks = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        mults = (1, 2, 5) if hi - lo < 2.5 else (1,)
        for m in mults:
            v = math.log10(m) + e
            if lo - 1e-9 <= v <= hi + 1e-9:
                ticks.append(v)
    return dict(title=dict(text=title), tickvals=ticks, ticktext=[f"{10 ** v:.3g}" for v in ticks])


def loss_curve(df: pd.DataFrame, title: str, x_title: str, y_title: str, train_label: str, val_label: str,
               uniform: float | None = None, uniform_label: str = "") -> go.Figure:
    """Training loss of every step (line) and validation loss where measured (markers), in nats.

    Args:
        df: ``analysis.training.training_history`` (columns step, loss, val_loss; a step-0 row holds the
            validation loss before training and no training loss).
        uniform: optional reference line, e.g. ``ln V`` (the loss of a uniform guess over V tokens).
    """
    fig = go.Figure()
    tr = df[df["step"] > 0]
    fig.add_trace(go.Scatter(x=tr["step"].tolist(), y=_finite(tr["loss"]), mode="lines", name=train_label,
                             line=dict(color=COLORS["train"], width=1.5),
                             hovertemplate=t("fig.step") + ": %{y:.4f} " + t("fig.nats") + "<extra>" + train_label + "</extra>"))
    val = df[df["val_loss"].notna()]
    fig.add_trace(go.Scatter(x=val["step"].tolist(), y=_finite(val["val_loss"]), mode="lines+markers",
                             name=val_label, line=dict(color=COLORS["val"], width=2), marker=dict(size=7),
                             hovertemplate=t("fig.step") + ": %{y:.4f} " + t("fig.nats") + "<extra>" + val_label + "</extra>"))
    if uniform is not None and math.isfinite(uniform):
        fig.add_hline(y=uniform, line_dash="dot", line_color="#7f7f7f",
                      annotation_text=f"{uniform_label} = {uniform:.2f}", annotation_position="top right")
    base_layout(fig, title, x_title, y_title, height=380)
    fig.update_xaxes(rangemode="tozero")
    return fig


def grad_heatmap(df: pd.DataFrame, title: str, x_title: str, y_title: str, colorbar_title: str,
                 height: int | None = None) -> go.Figure:
    """Gradient L2 norm of each block (rows, block 1 at the top) at each step (columns), log colour.

    Args:
        df: ``analysis.training.layer_grad_history`` (columns step, layer (0-based), grad_norm).
    """
    piv = df.pivot(index="layer", columns="step", values="grad_norm").sort_index().sort_index(axis=1)
    raw = piv.to_numpy(dtype=np.float64)
    z = _log10(raw)
    L = z.shape[0]
    finite = z[np.isfinite(z)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (float("nan"), float("nan"))
    fig = go.Figure(go.Heatmap(
        z=f32(z), x=piv.columns.to_numpy(), y=np.arange(1, L + 1), customdata=f32(raw), colorscale=GRAD_SCALE,
        hoverongaps=False, colorbar=_log_colorbar(lo, hi, colorbar_title),
        hovertemplate=t("fig.step_block") + ": %{customdata:.4g}<extra></extra>",
    ))
    base_layout(fig, title, x_title, y_title, height=height or max(260, min(620, 140 + 18 * L)))
    fig.update_yaxes(autorange="reversed", dtick=1 if L <= 16 else 4, showgrid=False)
    fig.update_xaxes(showgrid=False)
    return fig


def race_loss(df: pd.DataFrame, title: str, x_title: str, y_title: str, names: dict[str, str],
              val_suffix: str) -> go.Figure:
    """Training loss per step of both placements (lines) and their validation losses (markers, dashed).

    Args:
        df: ``training_history`` rows of both runs with a ``placement`` column ("pre" / "post").
        names: display name per placement.
    """
    fig = go.Figure()
    for placement in ("pre", "post"):
        d = df[df["placement"] == placement]
        if d.empty:
            continue
        tr = d[d["step"] > 0]
        fig.add_trace(go.Scatter(x=tr["step"].tolist(), y=_finite(tr["loss"]), mode="lines", name=names[placement],
                                 line=dict(color=COLORS[placement], width=1.5),
                                 hovertemplate=t("fig.step") + ": %{y:.4f} " + t("fig.nats") + "<extra>" + names[placement] + "</extra>"))
        val = d[d["val_loss"].notna()]
        label = f"{names[placement]} {val_suffix}"
        fig.add_trace(go.Scatter(x=val["step"].tolist(), y=_finite(val["val_loss"]), mode="lines+markers",
                                 name=label, line=dict(color=COLORS[placement], dash="dash", width=2),
                                 marker=dict(size=7, symbol="diamond"),
                                 hovertemplate=t("fig.step") + ": %{y:.4f} " + t("fig.nats") + "<extra>" + label + "</extra>"))
    base_layout(fig, title, x_title, y_title, height=380)
    fig.update_xaxes(rangemode="tozero")
    return fig


def race_grad_heatmaps(df: pd.DataFrame, title: str, x_title: str, y_title: str, colorbar_title: str,
                       names: dict[str, str]) -> go.Figure:
    """Two gradient heatmaps side by side (Pre-Norm left, Post-Norm right) on ONE log colour scale.

    Args:
        df: ``layer_grad_history`` rows of both runs with a ``placement`` column.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=[names["pre"], names["post"]], shared_yaxes=True,
                        horizontal_spacing=0.04)
    logs = _log10(df["grad_norm"].to_numpy())
    finite = logs[np.isfinite(logs)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (float("nan"), float("nan"))
    L = 0
    for col, placement in enumerate(("pre", "post"), start=1):
        d = df[df["placement"] == placement]
        if d.empty:
            continue
        piv = d.pivot(index="layer", columns="step", values="grad_norm").sort_index().sort_index(axis=1)
        raw = piv.to_numpy(dtype=np.float64)
        L = raw.shape[0]
        fig.add_trace(go.Heatmap(
            z=f32(_log10(raw)), x=piv.columns.to_numpy(), y=np.arange(1, L + 1), customdata=f32(raw),
            coloraxis="coloraxis", hoverongaps=False,
            hovertemplate=names[placement] + "<br>" + t("fig.step_block") + ": %{customdata:.4g}<extra></extra>",
        ), row=1, col=col)
        fig.update_xaxes(title_text=x_title, showgrid=False, row=1, col=col)
    base_layout(fig, title, "", "", height=max(300, min(640, 160 + 18 * L)))
    coloraxis = dict(colorscale=GRAD_SCALE, colorbar=_log_colorbar(lo, hi, colorbar_title))
    if math.isfinite(lo) and math.isfinite(hi):
        coloraxis.update(cmin=lo, cmax=hi)
    fig.update_layout(coloraxis=coloraxis)
    fig.update_yaxes(autorange="reversed", dtick=1 if L <= 16 else 4, showgrid=False)
    fig.update_yaxes(title_text=y_title, row=1, col=1)
    return fig


def grad_profile(df: pd.DataFrame, title: str, x_title: str, y_title: str, names: dict[str, str]) -> go.Figure:
    """Mean gradient L2 norm of each block over the run, one line per placement, log y axis.

    Args:
        df: ``analysis.training.layer_grad_profile`` rows with a ``placement`` column (columns layer
            (0-based), mean_grad_norm).
    """
    fig = go.Figure()
    for placement in ("pre", "post"):
        d = df[df["placement"] == placement].sort_values("layer")
        if d.empty:
            continue
        y = [v if v is not None and v > 0 else None for v in _finite(d["mean_grad_norm"])]
        fig.add_trace(go.Scatter(x=(d["layer"] + 1).tolist(), y=y, mode="lines+markers", name=names[placement],
                                 line=dict(color=COLORS[placement], width=2),
                                 hovertemplate=t("fig.block") + ": %{y:.4g}<extra>" + names[placement] + "</extra>"))
    base_layout(fig, title, x_title, y_title, height=360)
    L = int(df["layer"].max()) + 1 if len(df) else 1
    fig.update_yaxes(type="log", dtick=1)  # label powers of ten only (no ambiguous "2" / "5" minor labels)
    fig.update_xaxes(dtick=1 if L <= 16 else 4)
    return fig


def slot_heatmap(df: pd.DataFrame, title: str, x_title: str, y_title: str, colorbar_title: str,
                 top_label: str) -> go.Figure:
    """Layers x heads map of the mean attention to "the same slot in the previous line" (probability).

    The colour runs from 0 to the largest score, so equal scores look equal (no auto-stretched contrast).

    Args:
        df: ``analysis.training.slot_attention_table`` (columns layer, head (0-based), score in [0, 1]).
        top_label: hover/annotation text for the strongest head (outlined in red).
    """
    piv = df.pivot(index="layer", columns="head", values="score").sort_index().sort_index(axis=1)
    z = piv.to_numpy(dtype=np.float64)
    L, nh = z.shape
    top = float(np.nanmax(z)) if np.isfinite(z).any() else 1.0
    trace = go.Heatmap(z=f32(z), x=np.arange(1, nh + 1), y=np.arange(1, L + 1), colorscale="Blues", zmin=0.0,
                       zmax=max(top, 1e-9), colorbar=dict(title=dict(text=colorbar_title)), hoverongaps=False,
                       hovertemplate=t("fig.layer_head") + ": %{z:.3f}<extra></extra>")
    if L * nh <= 256:
        trace.update(text=cells(z, ".3f"), texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(260, min(760, 140 + 30 * L)))
    if np.isfinite(z).any():
        li, hj = np.unravel_index(int(np.nanargmax(z)), z.shape)
        fig.add_shape(type="rect", x0=hj + 0.5, x1=hj + 1.5, y0=li + 0.5, y1=li + 1.5,
                      line=dict(color="#d62728", width=3))
        # the arrow ends at the cell's top edge, so it never covers the value printed in the cell
        fig.add_annotation(x=hj + 1, y=li + 0.5, text=top_label, showarrow=True, arrowcolor="#d62728",
                           font=dict(color="#d62728"), ax=40, ay=-28, yanchor="bottom", standoff=2)
        fig.update_layout(margin=dict(t=100))
    # explicit ranges: exactly the L rows and nh columns (no empty "layer 0" row from padding)
    fig.update_yaxes(range=[L + 0.5, 0.5], dtick=1 if L <= 24 else 4, showgrid=False)
    fig.update_xaxes(range=[0.5, nh + 0.5], dtick=1 if nh <= 24 else 4, showgrid=False)
    return fig
