"""Figures of the layer-norms page (pure ``DataFrame -> go.Figure`` builders)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import CELL_TEXT_MAX_TOKENS, base_layout, column_tickangle, f32, position_axis
from ui.format import DASH, number

POSITION_LINE_COLOR = "rgba(99, 110, 250, 0.35)"  # thin, semi-transparent per-position lines
MEAN_LINE_COLOR = "#d62728"


FINAL_HEADROOM = 1.2  # the final-norm panel's y range ends this factor above its highest value


def depth_axis(labels: list[str], max_ticks: int = 26) -> dict:
    """Axis settings for integer depths 0..n-1 shown as ``labels`` ("embed", "block 1", …), thinned on deep
    models so tick labels do not overlap; the first and last depth are always labelled.

    Returns a dict for ``fig.update_xaxes`` / ``update_yaxes`` (tickvals, ticktext, tickangle, automargin)."""
    n = len(labels)
    step = max(1, -(-n // max_ticks))
    ticks = list(range(0, n, step))
    if ticks[-1] != n - 1:
        if len(ticks) > 1:
            ticks[-1] = n - 1  # move the last tick to the end instead of crowding two labels together
        else:
            ticks.append(n - 1)
    # many labels: slant them up to the right so the last one ("final norm") never runs off the plot
    axis = dict(tickmode="array", tickvals=ticks, ticktext=[labels[i] for i in ticks], automargin=True)
    if len(ticks) > 8:
        axis["tickangle"] = -45
    return axis


def residual_norm_lines(df: pd.DataFrame, depth_labels: list[str], position_names: list[str], title: str,
                        x_title: str, y_title: str, mean_name: str, sqrt_h: float | None = None,
                        sqrt_h_name: str = "", positions_name: str = "") -> go.Figure:
    """Residual L2 norm by depth: one thin line per position plus the bold mean, the final norm on its own axis.

    Under Pre-Norm the final norm brings every position back to about √H, often 10-40 × the block values; on a
    shared axis that jump would flatten the per-block growth the page describes. So the embedding and the
    blocks (depths 0..L) are drawn in the wide left panel, and the output of the final norm (depth L+1) in a
    narrow right panel with its own y axis (one dot per position, the mean as a bar-like marker, √H dotted).

    Args:
        df: ``analysis.norms.residual_norms`` (columns depth, stage, position, token, norm); depth runs
            0..L+1 (embedding, blocks, after the final norm).
        depth_labels: L+2 tick texts for the depths; position_names: one hover name per position.
        sqrt_h: if given, a dotted reference line at √H (the L2 norm of a norm's output with weight 1) in the
            right panel, and in the left one too when the blocks reach near it (Post-Norm).
    Returns:
        Traces: T position lines (x, y over depths 0..L), then the mean over positions on the left (named
        ``mean_name``, float32), then the final norm's per-position dots and its mean (on ``xaxis2``/``yaxis2``).
        Two legend entries: the positions and the mean.
    """
    wide = df.pivot(index="depth", columns="position", values="norm").sort_index()  # (L+2, T)
    blocks, final = wide.iloc[:-1], wide.iloc[-1]  # (L+1, T), (T,)
    depths = blocks.index.to_numpy()
    fig = make_subplots(rows=1, cols=2, column_widths=[0.86, 0.14], horizontal_spacing=0.07)
    for i, pos in enumerate(blocks.columns):  # one legend entry for all positions (hover names each one)
        fig.add_trace(go.Scatter(
            x=depths, y=f32(blocks[pos]), mode="lines", name=positions_name or position_names[pos],
            legendgroup="positions", showlegend=i == 0, line=dict(width=1, color=POSITION_LINE_COLOR),
            customdata=np.array(depth_labels[:-1], dtype=object),
            hovertemplate="%{customdata}: %{y:.3f}<extra>" + position_names[pos] + "</extra>",
        ), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=depths, y=f32(blocks.mean(axis=1)), mode="lines+markers", name=mean_name, legendgroup="mean",
        line=dict(width=4, color=MEAN_LINE_COLOR), customdata=np.array(depth_labels[:-1], dtype=object),
        hovertemplate="%{customdata}: %{y:.3f}<extra>" + mean_name + "</extra>",
    ), row=1, col=1)
    T = len(final)
    fig.add_trace(go.Scatter(
        x=np.zeros(T), y=f32(final), mode="markers", name=positions_name, legendgroup="positions", showlegend=False,
        marker=dict(size=7, color=POSITION_LINE_COLOR), customdata=np.array(position_names[:T], dtype=object),
        hovertemplate=depth_labels[-1] + ": %{y:.3f}<extra>%{customdata}</extra>",
    ), row=1, col=2)
    fig.add_trace(go.Scatter(
        x=[0], y=f32([final.mean()]), mode="markers", name=mean_name, legendgroup="mean", showlegend=False,
        marker=dict(size=22, symbol="line-ew-open", color=MEAN_LINE_COLOR, line=dict(width=4, color=MEAN_LINE_COLOR)),
        hovertemplate=depth_labels[-1] + ": %{y:.3f}<extra>" + mean_name + "</extra>",
    ), row=1, col=2)
    if sqrt_h is not None:
        fig.add_hline(y=sqrt_h, line=dict(dash="dot", color="gray", width=1), row=1, col=2)
        block_max = np.nanmax(np.where(np.isfinite(blocks.to_numpy()), blocks.to_numpy(), np.nan), initial=0.0)
        if sqrt_h <= 1.5 * block_max:  # the blocks reach √H (Post-Norm): the reference helps on the left too
            fig.add_hline(y=sqrt_h, line=dict(dash="dot", color="gray", width=1), annotation_text=sqrt_h_name,
                          annotation_position="top left", row=1, col=1)
        else:  # name the line in the right panel
            fig.add_annotation(x=0, y=sqrt_h, xref="x2", yref="y2", text=sqrt_h_name, showarrow=False,
                               yshift=12, font=dict(color="gray"))
    base_layout(fig, title, x_title, y_title, height=460)
    # a lesson's reveal outlines a depth (ui.teaching.highlight.highlight): the final norm's sits on the right panel
    fig.update_layout(meta={"highlight_x": {str(int(depths.max()) + 1): {"axis": "x2", "at": 0.0}}})
    # legend inside the left panel's lower right corner: empty under both placements (Pre-Norm grows from the
    # lower left, Post-Norm sits at √H), and clear of the title even at presenter font sizes
    fig.update_layout(legend=dict(orientation="v", x=0.85, xanchor="right", y=0.03, yanchor="bottom",
                                  bgcolor="rgba(255,255,255,0.8)"))
    fig.update_xaxes(title_text=None, row=1, col=2)
    fig.update_yaxes(title_text=None, row=1, col=2)
    fig.update_xaxes(**depth_axis(depth_labels[:-1]), row=1, col=1)
    fig.update_xaxes(tickmode="array", tickvals=[0], ticktext=[depth_labels[-1]], range=[-0.6, 0.6],
                     showgrid=False, row=1, col=2)
    fig.update_yaxes(rangemode="tozero")
    # the final norm's panel from 0 with room above its highest dot, the mean's wide marker and the √H label:
    # autorange cut the marker at the top edge when every position sits at √H (Pre-Norm at init)
    top = [float(v) for v in final.to_numpy() if np.isfinite(v)] + ([sqrt_h] if sqrt_h is not None else [])
    if top and max(top) > 0:
        fig.update_yaxes(range=[0, max(top) * FINAL_HEADROOM], row=1, col=2)
    return fig


def sublayer_norm_bars(df: pd.DataFrame, component_names: dict[str, str], max_name: str, title: str,
                       x_title: str, y_title: str) -> go.Figure:
    """Grouped bars: mean L2 norm of each block's attention output and MLP output.

    Args:
        df: ``analysis.norms.sublayer_norms`` (columns layer (0-based), component, norm, norm_max).
        component_names: display name per component ("attn_out", "mlp_out").
    Bars are drawn at 1-based block numbers; the hover also shows the maximum over positions.
    """
    fig = go.Figure()
    for comp, name in component_names.items():
        part = df[df["component"] == comp].sort_values("layer")
        fig.add_trace(go.Bar(
            x=part["layer"].to_numpy() + 1, y=f32(part["norm"]), name=name, customdata=f32(part["norm_max"]),
            hovertemplate="%{x}: %{y:.3f} (" + max_name + " %{customdata:.3f})<extra>" + name + "</extra>",
        ))
    fig.update_layout(barmode="group")
    base_layout(fig, title, x_title, y_title, height=380)
    n = int(df["layer"].max()) + 1 if len(df) else 1
    fig.update_xaxes(tickmode="linear", tick0=1, dtick=max(1, -(-n // 24)))
    return fig


def residual_norm_heatmap(df: pd.DataFrame, depth_labels: list[str], tick_labels: list[str], title: str,
                          x_title: str, y_title: str, colorbar_title: str, max_tokens: int) -> go.Figure:
    """Heatmap of the residual L2 norm: rows = depths (embedding at the top), columns = positions.

    The colour is ``log10(norm)`` (colour bar ticked in plain norm values): under Pre-Norm the row after the
    final norm (≈ √H) is often 10-40 × the block rows, and a linear colour scale would paint every block row
    the same. Hover and per-cell text show the norm itself.

    Args:
        df: ``analysis.norms.residual_norms``; depth_labels: L+2 row labels; tick_labels: one per position.
        max_tokens: draw positions ``0 .. max_tokens-1`` only (the caller tells the user).
    ``z`` = log10(norm) with L+2 rows and ``min(T, max_tokens)`` columns (float32; NaN where the norm is not a
    positive finite number, drawn empty); ``text`` holds the norms as strings ("—" when not finite).
    Per-cell text only when both the positions and the rows fit ``CELL_TEXT_MAX_TOKENS`` (+2 rows).
    """
    wide = df.pivot(index="depth", columns="position", values="norm").sort_index()  # (L+2, T)
    n = min(wide.shape[1], max_tokens)
    norms = wide.iloc[:, :n].to_numpy(dtype=np.float64)
    ok = np.isfinite(norms) & (norms > 0)
    z = f32(np.where(ok, np.log10(np.where(ok, norms, 1.0)), np.nan))
    labels = np.array([[f"{d} · {tick_labels[p]}" for p in range(n)] for d in depth_labels], dtype=object)
    values = np.where(ok, np.vectorize(lambda v: number(v, ".3g"))(norms), DASH).astype(object)
    finite = z[np.isfinite(z)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    ticks = [v for e in range(int(np.floor(lo)) - 1, int(np.ceil(hi)) + 2) for v in (10.0 ** e, 2 * 10.0 ** e, 5 * 10.0 ** e)
             if lo - 1e-9 <= np.log10(v) <= hi + 1e-9]
    if len(ticks) < 2:
        ticks = [10 ** lo, 10 ** hi]
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(n), y=wide.index.to_numpy(), colorscale="Viridis",
        colorbar=dict(title=dict(text=colorbar_title, side="right"), tickvals=np.log10(ticks).tolist(),
                      ticktext=[f"{v:.3g}" for v in ticks]),
        customdata=labels, text=values,
        hovertemplate="%{customdata}: %{text}<extra></extra>",
        texttemplate="%{text}" if max(n, z.shape[0]) <= CELL_TEXT_MAX_TOKENS + 2 else None,
        textfont=dict(size=10),
    ))
    base_layout(fig, title, x_title, y_title, height=max(320, min(900, 40 + 22 * z.shape[0])))
    fig.update_xaxes(**position_axis(tick_labels[:n]), tickangle=column_tickangle(n, tick_labels[:n]))
    fig.update_yaxes(**{**depth_axis(depth_labels, max_ticks=30), "tickangle": 0}, autorange="reversed")
    return fig
