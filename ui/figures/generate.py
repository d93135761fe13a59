"""Figures of the decode-stepper page: the new query's attention row, cache growth per layer, the sampling
filters' effect on the top tokens, and the KV-cache memory calculator. DataFrames in (``analysis.generation``),
Plotly figures out; every label is passed in already translated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import (
    CELL_TEXT_MAX_TOKENS, LOG_AXIS, base_layout, column_tickangle, f32, legend_under_title, position_axis,
)
from ui.escape import plotly
from ui.format import significant
from ui.i18n import t

SOURCE_COLORS = {"prefill": "#1f77b4", "decode": "#ff7f0e"}
STAGE_COLORS = ["#9e9e9e", "#1f77b4", "#2ca02c", "#9467bd", "#d62728"]  # softmax, temperature, top-k, top-p, min-p
ATTENTION_COLORS = {"MHA": "#1f77b4", "GQA": "#2ca02c", "MQA": "#ff7f0e", "window": "#9467bd"}


def query_row_heatmap(row: pd.DataFrame, labels: list[str], prefill_len: int, title: str, x_title: str,
                      y_label: str, colorbar_title: str) -> go.Figure:
    """One heatmap row: the new query's softmax weights over the S cached keys of one head.

    Args:
        row: ``analysis.generation.query_row`` filtered to one head (columns key_position, weight, ...).
        labels: S unique key tick labels; prefill_len: keys before this index came from the prompt (a dashed
            line marks the boundary).
    """
    w = f32(row["weight"].to_numpy())[None, :]  # (1, S)
    S = w.shape[1]
    trace = go.Heatmap(z=w, x=np.arange(S), y=[0], colorscale="Blues", zmin=0.0, zmax=1.0,  # probabilities
                       colorbar=dict(title=dict(text=colorbar_title), len=1.2, thickness=14),
                       customdata=[labels[:S]], hovertemplate=t("fig.key_token") + ": %{z:.4f}<extra></extra>")
    if S <= CELL_TEXT_MAX_TOKENS:
        trace.update(text=[[f"{v:.2f}" for v in w[0]]], texttemplate="%{text}", textfont=dict(size=11))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, "", height=260)
    fig.update_xaxes(**position_axis(labels), tickangle=column_tickangle(S, labels))
    fig.update_yaxes(tickmode="array", tickvals=[0], ticktext=[y_label])
    if 0 < prefill_len < S:
        fig.add_vline(x=prefill_len - 0.5, line_dash="dash", line_color="#ff7f0e")
    return fig


def cache_bars(df: pd.DataFrame, source_labels: dict[str, str], title: str, x_title: str, y_title: str) -> go.Figure:
    """Stacked horizontal bars: cached positions per layer, prompt (prefill) and generated (decode) parts.

    Args:
        df: ``analysis.generation.cache_growth`` (layer, source, positions), with ``layer`` as it is to be shown
            (the page numbers layers from 1).
    """
    fig = go.Figure()
    for source in ("prefill", "decode"):
        part = df[df["source"] == source]
        fig.add_bar(x=part["positions"].tolist(), y=part["layer"].tolist(), orientation="h",
                    name=source_labels[source], marker_color=SOURCE_COLORS[source],
                    hovertemplate=t("fig.layer_y") + ": %{x}<extra>" + source_labels[source] + "</extra>")
    n_layers = int(df["layer"].nunique())
    base_layout(fig, title, x_title, y_title, height=max(260, min(640, 120 + 22 * n_layers)))
    legend_under_title(fig)  # a phone: the legend wraps below the title, never onto it
    fig.update_layout(barmode="stack", legend_traceorder="normal")
    layers = sorted(int(v) for v in df["layer"].unique())
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=layers, ticktext=[str(v) for v in layers], dtick=1)
    return fig


def filter_bars(df: pd.DataFrame, stage_labels: dict[str, str], title: str, x_title: str, y_title: str) -> go.Figure:
    """Grouped bars: the raw top tokens' probability after each filter stage (0 = removed).

    Args:
        df: ``analysis.generation.filter_table`` (rank, token, stage, probability).
        stage_labels: display name per stage, in the order the stages are applied.
    """
    fig = go.Figure()
    first = df[df["stage"] == next(iter(stage_labels))]
    ticks = [plotly(f"{r}. {tok}") for r, tok in zip(first["rank"], first["token"])]
    for color, (stage, label) in zip(STAGE_COLORS, stage_labels.items()):
        part = df[df["stage"] == stage]
        fig.add_bar(x=part["rank"].tolist(), y=f32(part["probability"] * 100.0), name=label, marker_color=color,
                    hovertemplate="%{x}: %{y:.2f}%<extra>" + label + "</extra>")
    base_layout(fig, title, x_title, y_title, height=420)
    legend_under_title(fig)  # a phone: the legend wraps below the title, never onto it
    fig.update_layout(barmode="group", bargap=0.2)
    fig.update_xaxes(tickmode="array", tickvals=first["rank"].tolist(), ticktext=ticks, tickangle=-30)
    fig.update_yaxes(ticksuffix="%", rangemode="tozero")
    return fig


def memory_bars(df: pd.DataFrame, title: str, x_title: str, y_title: str, kv_heads_name: str = "n_kv_heads",
                names: dict[str, str] | None = None) -> go.Figure:
    """Grouped bars of KV-cache MiB per model, one colour per attention kind; the configured variant is outlined
    in black and labelled with its size.

    Args:
        df: ``analysis.generation.memory_table``.
        kv_heads_name: the hover's name for the number of KV heads (translated).
        names: a legend name per attention kind where it is a word (``window``), in the session's language.
    """
    fig = go.Figure()
    for kind, color in ATTENTION_COLORS.items():
        part = df[df["attention"] == kind]
        if part.empty:
            continue
        name = (names or {}).get(kind, kind)
        fig.add_bar(x=part["model"].tolist(), y=f32(part["mib"]), name=name, marker_color=color,
                    marker_line_width=[3 if c else 0 for c in part["configured"]], marker_line_color="black",
                    text=[significant(m) for m in part["mib"]], textposition="outside",
                    customdata=part["kv_heads"].tolist(),
                    hovertemplate=f"%{{x}} {name} ({kv_heads_name} = %{{customdata}}): %{{y:,.2f}} MiB<extra></extra>")
    base_layout(fig, title, x_title, y_title, height=440)
    legend_under_title(fig)  # a phone: the legend wraps below the title, never onto it
    fig.update_layout(barmode="group")
    fig.update_yaxes(**LOG_AXIS)
    return fig
