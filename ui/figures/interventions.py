"""Figures of the Interventions page: a clickable effect map (layers x heads or layers x positions), the loss with
heads removed together, and the top next tokens before and after. Pure ``DataFrame -> go.Figure`` builders.

As on the head-roles map, Plotly heatmaps cannot be selected, so one transparent scatter point sits on every cell
(its ``customdata`` is the cell's 0-based [layer, column]); ``st.plotly_chart(on_select=...)`` then reports a click.
Layers are shown 1-based (the page's convention), columns as given (heads 1-based, positions 0-based with tokens).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import DIVERGING, base_layout, f32, layer_ticks
from ui.format import cells, number

SELECT_TRACE = 1  # index of the clickable scatter trace in :func:`effect_map`
HIGHLIGHT = "#2ca02c"
BEFORE, AFTER = "#7f7f7f", "#d62728"


def effect_map(frame: pd.DataFrame, column: str, value: str, col_labels: list[str], title: str, x_title: str,
               y_title: str, colorbar_title: str, selected: tuple[int, int] | None = None,
               zmax: float | None = None) -> go.Figure:
    """``frame`` (0-based ``layer`` and ``column`` columns, one row per cell) as a layers x columns heatmap of
    ``value`` on a diverging scale centred at 0 (red = positive), layer rows from the top.

    Args:
        column: ``"head"`` or ``"position"``; its values index ``col_labels`` (the tick text of each column).
        zmax: the colour range's end (default: the largest |value|); NaN cells are left blank.
        selected: 0-based (layer, column) outlined.
    Returns:
        Trace 0 = the heatmap (x = column index, y = layer 1..L); trace 1 = the clickable points.
    """
    piv = frame.pivot(index="layer", columns=column, values=value).sort_index().sort_index(axis=1)
    z = f32(piv.to_numpy())  # (rows, cols)
    layers, cols = piv.index.to_numpy(), piv.columns.to_numpy()
    finite = np.abs(z[np.isfinite(z)])
    top = zmax if zmax is not None else (float(finite.max()) if finite.size else 1.0)
    top = max(top, 1e-6)
    trace = go.Heatmap(z=z, x=np.arange(len(cols)), y=layers + 1, colorscale=DIVERGING, zmid=0.0, zmin=-top, zmax=top,
                       hoverinfo="skip", colorbar=dict(title=dict(text=colorbar_title, side="right")))
    if z.size <= 300:  # two decimals, more where the largest effect is smaller than 0.1 (it keeps two digits)
        decimals = max(2, 1 - int(np.floor(np.log10(top))))
        trace.update(text=cells(z, f".{decimals}f"), texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(320, min(900, 140 + 22 * len(layers))))
    ticks = [col_labels[int(c)] for c in cols]
    rr, cc = np.meshgrid(np.arange(len(layers)), np.arange(len(cols)), indexing="ij")
    rr, cc = rr.reshape(-1), cc.reshape(-1)
    fig.add_trace(go.Scatter(
        x=cc, y=layers[rr] + 1, mode="markers", showlegend=False,
        customdata=np.stack([layers[rr], cols[cc]], 1),
        marker=dict(size=max(6, min(28, 600 // max(len(layers), len(cols)))), symbol="square",
                    color="rgba(0,0,0,0)"),
        text=[f"{y_title} {layers[r] + 1}, {x_title} {ticks[c]}: {number(z[r, c], '.3f')}" for r, c in zip(rr, cc)],
        hovertemplate="%{text}<extra></extra>",
    ))
    fig.update_layout(clickmode="event+select", dragmode=False)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(cols))), ticktext=ticks, range=[-0.5, len(cols) - 0.5],
                     showgrid=False, zeroline=False, tickangle=-45 if len(cols) > 12 else 0)
    fig.update_yaxes(range=[layers.max() + 1.5, layers.min() + 0.5], showgrid=False, zeroline=False,
                     **layer_ticks(len(layers)))
    if selected is not None:
        lay, col = selected
        where = np.flatnonzero(cols == col)
        if where.size and lay in set(layers.tolist()):
            x = int(where[0])
            fig.add_shape(type="rect", x0=x - 0.5, x1=x + 0.5, y0=lay + 0.5, y1=lay + 1.5,
                          line=dict(color=HIGHLIGHT, width=3))
    return fig


def together_bars(groups: pd.DataFrame, base: float, title: str, x_title: str, y_title: str) -> go.Figure:
    """Bars of ``groups`` (``label``, ``loss``): the loss with each group of heads removed, the plain run's
    ``base`` as a dashed line."""
    fig = go.Figure(go.Bar(x=groups["label"], y=f32(groups["loss"]), marker_color=AFTER,
                           text=[number(v, ".2f") for v in groups["loss"]], textposition="outside",
                           hovertemplate="%{x}: %{y:.3f}<extra></extra>"))
    base_layout(fig, title, x_title, y_title, height=380)
    fig.add_hline(y=base, line_dash="dash", line_color=BEFORE)
    fig.update_yaxes(range=[0, 1.15 * max(float(groups["loss"].max()), base, 1e-6)])
    return fig


def tokens_bars(tokens: pd.DataFrame, before_name: str, after_name: str, title: str, x_title: str) -> go.Figure:
    """Horizontal bars of the ``before`` and ``after`` probabilities of each ``token`` (top of the list = the most
    likely before)."""
    y = np.arange(len(tokens))
    fig = go.Figure([
        go.Bar(y=y, x=f32(tokens["before"]), orientation="h", name=before_name, marker_color=BEFORE,
               hovertemplate="%{x:.3f}<extra></extra>"),
        go.Bar(y=y, x=f32(tokens["after"]), orientation="h", name=after_name, marker_color=AFTER,
               hovertemplate="%{x:.3f}<extra></extra>"),
    ])
    base_layout(fig, title, x_title, "", height=max(300, 120 + 34 * len(tokens)))
    fig.update_layout(barmode="group")
    fig.update_yaxes(tickmode="array", tickvals=list(y), ticktext=list(tokens["token"]), autorange="reversed")
    fig.update_xaxes(range=[0, 1])
    return fig
