"""Figures of the "Follow a token" page: the flow down the whole depth, and the direct logit attribution."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout, f32, legend_under_title

HIGHLIGHT = "#d97706"
MAX_BAR_LABELS = 16  # tick labels on the attribution's axis (a phone's width)
#: the colour of a row by what it is: the stream itself, a norm, attention, the FFN, the head
GROUP_COLORS = {"stream": "#1d4ed8", "norm": "#9ca3af", "attn": "#059669", "mlp": "#7c3aed", "head": "#111827"}


def step_group(kind: str) -> str:
    """``analysis.follow`` row kind -> colour group."""
    if kind in ("embed", "resid_mid", "resid_post"):
        return "stream"
    if kind.startswith("attn"):
        return "attn"
    if kind.startswith("mlp"):
        return "mlp"
    return "head" if kind == "logits" else "norm"


def flow_chart(steps: pd.DataFrame, current: int, labels: list[str], group_names: dict[str, str], title: str,
               x_title: str, y_title: str) -> go.Figure:
    """The norm of what each sub-step writes or holds (``analysis.follow.follow_steps``'s ``norm``), one marker per
    sub-step down the whole depth, coloured by what the row is; the residual stream's own norm as a line; the
    current step (0-based ``current``) ringed and marked by a vertical line. A log y axis: the stream grows by
    orders of magnitude in a real model. ``labels``: one hover label per row."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(steps["step"]), y=f32(steps["resid_norm"]), mode="lines", name=group_names["line"],
                             line=dict(color=GROUP_COLORS["stream"], width=1.5), hoverinfo="skip"))
    groups = [step_group(k) for k in steps["kind"]]
    for group, color in GROUP_COLORS.items():
        idx = [i for i, g in enumerate(groups) if g == group]
        if not idx:
            continue
        fig.add_trace(go.Scatter(
            x=[int(steps["step"].iloc[i]) for i in idx], y=f32(steps["norm"].iloc[idx]), mode="markers",
            name=group_names[group], marker=dict(color=color, size=7),
            customdata=[labels[i] for i in idx], hovertemplate="%{customdata}<br>‖·‖ = %{y:.4g}<extra></extra>"))
    row = steps.iloc[current]
    fig.add_trace(go.Scatter(x=[int(row["step"])], y=f32([row["norm"]]), mode="markers", showlegend=False,
                             marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(color=HIGHLIGHT, width=3)),
                             customdata=[labels[current]], hovertemplate="%{customdata}<extra></extra>"))
    fig.add_vline(x=int(row["step"]), line=dict(color=HIGHLIGHT, width=2, dash="dot"))
    values = np.concatenate([steps["norm"].to_numpy(float), steps["resid_norm"].to_numpy(float)])
    values = values[np.isfinite(values) & (values > 0)]
    decades = np.log10(values.max() / values.min()) if len(values) else 0.0
    # powers of ten only, once the data spans one: Plotly draws the 2s and 5s between them at 3/4 of the font
    fig.update_yaxes(type="log", **(dict(dtick=1) if decades >= 1 else {}))
    fig.update_xaxes(range=[-1, len(steps)])
    return legend_under_title(base_layout(fig, title, x_title, y_title, height=420))  # a phone: never onto the title


def attribution_bar(table: pd.DataFrame, labels: list[str], groups: list[str], group_names: dict[str, str],
                    title: str, x_title: str, y_title: str) -> go.Figure:
    """One bar per term of the logit (``analysis.follow.Attribution.table`` rows, in model order), coloured by
    what the term is (``groups``: keys of :data:`GROUP_COLORS`, named in the legend by ``group_names``); its share in
    the hover. With many bars only every few are named on the axis (the hover names each)."""
    fig = go.Figure()
    for group, color in GROUP_COLORS.items():
        idx = [i for i, g in enumerate(groups) if g == group]
        if idx:
            fig.add_trace(go.Bar(x=idx, y=f32(table["contribution"].iloc[idx]), name=group_names[group],
                                 marker_color=color, customdata=[labels[i] for i in idx],
                                 hovertemplate="%{customdata}: %{y:+.4g}<extra></extra>"))
    every = max(1, -(-len(table) // MAX_BAR_LABELS))  # 61 bars on SmolLM2: every 4th named, the hover names all
    ticks = list(range(0, len(table), every))
    fig.update_xaxes(tickmode="array", tickvals=ticks, ticktext=[labels[i] for i in ticks], tickangle=-60)
    fig.add_hline(y=0, line=dict(color="#6b7280", width=1))
    fig.update_layout(barmode="overlay")  # one bar per x: full width
    return legend_under_title(base_layout(fig, title, x_title, y_title, height=420))
