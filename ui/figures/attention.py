"""Figures of the attention page: one head's matrix, all heads of a layer, the layers x heads overview,
and per-head entropy.

Conventions (see ``ui.figures.common``): heatmaps are drawn on integer positions with token text as tick
labels, queries run top to bottom (row 0 at the top), keys left to right, and masked (future) cells are NaN so
they render as the light-grey plot background instead of a colour. Arrays are sent as float32.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.common import (
    CELL_TEXT_MAX_TOKENS, DIVERGING, base_layout, column_tickangle, f32, layer_ticks, mark_window, position_axis,
    token_pairs,
)
from ui.format import cells, number
from ui.i18n import t

MASKED_BG = "#d3d3d3"  # light grey: the colour of NaN (masked) cells, i.e. the plot background
SEQUENTIAL = "Blues"  # probabilities 0..1


def attention_heatmap(matrix: pd.DataFrame, labels: list[str], stage: str, title: str, x_title: str, y_title: str,
                      colorbar_title: str, sink: np.ndarray | None = None, sink_label: str = "",
                      key_labels: list[str] | None = None, first: tuple[int, int] = (0, 0),
                      limit: float | None = None, cell_text: bool = True) -> go.Figure:
    """Heatmap of one head's ``[T, T]`` attention matrix at one stage (queries = rows, keys = columns).

    Args:
        matrix: ``T x T`` values (``analysis.attention.attention_stage``); NaN = masked future cell.
        labels: T unique tick labels (``Explorer.tick_labels``), used on both axes.
        stage: "raw", "scaled", "masked" (diverging scale centred at 0) or "softmax" (sequential, 0..1).
        sink: ``[T]`` each row's share of the learned sink (gpt-oss), drawn as one more column at x = T, labelled
            ``sink_label``: the key weights of a row and its sink cell sum to 1.
        key_labels: the columns' labels when they are other positions than the rows' (a window: the last queries
            and the keys they see); ``first``: the (query, key) position of the top-left cell, so that a lesson's
            highlight, given in positions, lands on its cell (``ui.figures.common.mark_window``).
        limit: a diverging scale's ends, ``-limit..limit`` (charts compared side by side share one scale); by
            default the scale spans the matrix's own values, centred at 0.
        cell_text: False for colour-only cells (two maps side by side: too narrow for their numbers, in the hover).
    Returns:
        A figure with one ``go.Heatmap`` on integer positions; y reversed so query 0 is at the top; NaN cells
        show the light-grey background. Every token labelled on both axes up to ``LABEL_EVERY_TOKEN`` (smaller
        type above ``DENSE_TICKS``, columns upright), and the hover names the query's and the key's token (its
        ``customdata``) at any length. Per-cell text only when ``T <= CELL_TEXT_MAX_TOKENS`` (half that for
        scores, whose labels are wider).
    """
    z = f32(matrix.to_numpy())  # (queries, keys)
    T, K = z.shape
    cols = list(labels[:T]) if key_labels is None else list(key_labels[:K])
    if sink is not None:  # one more column: the sink's share of each row (a softmax column with no value)
        z = np.concatenate([z, f32(np.asarray(sink, dtype=np.float32)[:T, None])], axis=1)  # (T, K + 1)
    probs = stage == "softmax"
    scale = dict(colorscale=SEQUENTIAL, zmin=0.0, zmax=1.0) if probs else dict(colorscale=DIVERGING, zmid=0.0) \
        if not limit else dict(colorscale=DIVERGING, zmin=-limit, zmax=limit)
    trace = go.Heatmap(
        z=z, x=np.arange(z.shape[1]), y=np.arange(T), hoverongaps=False, colorbar=dict(title=dict(text=colorbar_title)),
        customdata=token_pairs(labels[:T], cols + ([sink_label] if sink is not None else [])),
        meta=dict(token_fields=["customdata"]),  # tokens, not UI text
        hovertemplate=t("fig.query_key_tokens") + ": %{z:.4g}<extra></extra>", **scale,
    )
    if cell_text and max(T, K) <= (CELL_TEXT_MAX_TOKENS if probs else CELL_TEXT_MAX_TOKENS // 2):  # scores: wider
        trace.update(text=cells(z, ".2f" if probs else ".2g"), texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(420, min(760, 160 + 22 * T)))
    fig.update_layout(plot_bgcolor=MASKED_BG)
    mark_window(fig, x0=first[1], y0=first[0])
    x_axis = position_axis(cols)
    if sink is not None:
        x_axis.update(tickvals=[*x_axis["tickvals"], K], ticktext=[*x_axis["ticktext"], sink_label])
        fig.add_vline(x=K - 0.5, line=dict(color="black", width=2))  # the sink column apart from the keys
    fig.update_xaxes(**x_axis, showgrid=False, zeroline=False, tickangle=column_tickangle(K, x_axis["ticktext"]))
    fig.update_yaxes(**position_axis(labels), showgrid=False, zeroline=False, autorange="reversed")
    return fig


def _grid_shape(n: int, max_cols: int = 8) -> tuple[int, int]:
    cols = min(n, max_cols)
    return math.ceil(n / cols), cols


def heads_grid(mats: list[np.ndarray], titles: list[str], title: str, colorbar_title: str,
               max_cols: int = 8) -> go.Figure:
    """Small multiples: one softmax heatmap per head of a layer, shared colour scale 0..1, no cell text.

    Args:
        mats: one ``[T, T]`` probability matrix per head (NaN above the diagonal).
        titles: one subplot title per head (e.g. "head 3").
    """
    rows, cols = _grid_shape(len(mats), max_cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.02,
                        vertical_spacing=min(0.08, 0.3 / rows))
    traces = [go.Heatmap(z=f32(m), coloraxis="coloraxis", hoverongaps=False,
                         hovertemplate=f"{name}<br>" + t("fig.query_key") + ": %{z:.3f}<extra></extra>")
              for m, name in zip(mats, titles)]
    fig.add_traces(traces, rows=[i // cols + 1 for i in range(len(mats))], cols=[i % cols + 1 for i in range(len(mats))])
    base_layout(fig, title, "", "", height=max(300, 40 + 170 * rows))
    _grid_style(fig, colorbar_title)
    return fig


def layers_heads_grid(mats: list[list[np.ndarray]], row_titles: list[str], col_titles: list[str], title: str,
                      colorbar_title: str) -> go.Figure:
    """The layers x heads overview: ``mats[layer][head]`` is a ``[T, T]`` probability matrix.

    One small heatmap per (layer, head), layers top to bottom, heads left to right, shared colour scale 0..1.
    The caller caps the number of cells (see the attention page); this builder draws what it is given.
    """
    L, nh = len(mats), len(mats[0])
    fig = make_subplots(rows=L, cols=nh, column_titles=col_titles,
                        horizontal_spacing=min(0.01, 0.2 / nh), vertical_spacing=min(0.01, 0.2 / L))
    traces, rr, cc = [], [], []
    for i in range(L):
        for j in range(nh):
            traces.append(go.Heatmap(z=f32(mats[i][j]), coloraxis="coloraxis", hoverongaps=False,
                                     hovertemplate=f"{row_titles[i]} {col_titles[j]}<br>"
                                                   + t("fig.query_key") + ": %{z:.3f}<extra></extra>"))
            rr.append(i + 1)
            cc.append(j + 1)
    fig.add_traces(traces, rows=rr, cols=cc)
    base_layout(fig, title, "", "", height=max(300, 80 + min(110, 900 // L) * L))
    _grid_style(fig, colorbar_title)
    for i, name in enumerate(row_titles):  # layer names on the left of each row (row_titles would sit on the right)
        fig.update_yaxes(title_text=name, title_standoff=2, title_font=dict(size=11), row=i + 1, col=1)
    return fig


def _grid_style(fig: go.Figure, colorbar_title: str) -> None:
    fig.update_layout(plot_bgcolor=MASKED_BG,
                      coloraxis=dict(colorscale=SEQUENTIAL, cmin=0.0, cmax=1.0, colorbar=dict(title=dict(text=colorbar_title))))
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed")
    fig.update_annotations(font=dict(size=11))


def entropy_bar(df: pd.DataFrame, title: str, x_title: str, y_title: str, uniform_label: str) -> go.Figure:
    """Per-head mean attention entropy of one layer (``analysis.attention.head_entropy`` rows of that layer).

    Bars: ``entropy`` (nats) per head, x = 1-based head number; a dashed line at ``max_entropy``, the entropy of
    uniform causal attention (mean of ln(t+1)), the largest value a causal head can reach on this input.
    """
    heads = df["head"].to_numpy() + 1
    fig = go.Figure(go.Bar(x=heads, y=f32(df["entropy"]), text=[number(v, ".3f") for v in df["entropy"]],
                           textposition="inside", insidetextanchor="middle", hovertemplate=t("fig.head_value") + "<extra></extra>"))
    ref = float(df["max_entropy"].iloc[0])
    fig.add_hline(y=ref, line_dash="dash", line_color="#d62728",
                  annotation_text=f"{uniform_label} = {ref:.3f}", annotation_position="top left")
    base_layout(fig, title, x_title, y_title, height=360)
    fig.update_xaxes(tickmode="array", tickvals=list(heads), ticktext=[str(h) for h in heads])
    finite = df["entropy"][np.isfinite(df["entropy"])]
    top = max([ref] + ([float(finite.max())] if len(finite) else []))
    fig.update_yaxes(range=[0, top * 1.25 + 0.05])
    return fig


def entropy_heatmap(df: pd.DataFrame, title: str, x_title: str, y_title: str, colorbar_title: str) -> go.Figure:
    """Layers x heads heatmap of mean attention entropy (nats), layer 1 at the top, 1-based ticks.

    Args:
        df: ``analysis.attention.head_entropy`` (columns layer, head, entropy, max_entropy; 0-based indices).
    Colour scale runs from 0 (every query attends to one key) to the uniform reference ``max_entropy``.
    """
    piv = df.pivot(index="layer", columns="head", values="entropy").sort_index().sort_index(axis=1)
    z = f32(piv.to_numpy())
    L, nh = z.shape
    ref = float(df["max_entropy"].iloc[0])
    trace = go.Heatmap(z=z, x=np.arange(1, nh + 1), y=np.arange(1, L + 1), colorscale="Viridis", zmin=0.0,
                       zmax=max(ref, 1e-9), colorbar=dict(title=dict(text=colorbar_title, side="right")),
                       hovertemplate=t("fig.layer_head") + ": %{z:.4f} " + t("fig.nats") + "<extra></extra>")
    if L * nh <= 256:
        trace.update(text=cells(z, ".2f"), texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(300, min(900, 120 + 26 * L)))
    fig.update_yaxes(autorange="reversed", **layer_ticks(L), showgrid=False)
    fig.update_xaxes(**layer_ticks(nh), showgrid=False)
    return fig
