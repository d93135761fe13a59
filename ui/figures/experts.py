"""Figures of the Experts (mixture-of-experts) page: the router's probabilities per token and expert with the
chosen top-k marked, and the load per expert against the even share k/E.

Experts are numbered from 1 on screen (``experts.{e}`` is expert e + 1), like layers and heads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import CELL_TEXT_MAX_TOKENS, base_layout, f32, position_axis
from ui.format import cells, number
from ui.i18n import t

SEQUENTIAL = "Blues"  # probabilities 0..1, as the attention heatmap's softmax stage
CHOSEN_COLOR = "#f97316"  # the boxes around the chosen experts: orange reads on white and on dark blue
ABOVE, BELOW = "#f97316", "#60a5fa"  # load bars above / at or below the even share
CELL_TEXT_MAX_EXPERTS = 16  # per-cell numbers up to this many experts (narrower cells cannot hold "0.25")
INSET = 0.1  # a chosen cell's box sits this far inside the cell, so two chosen neighbours show two boxes


def _expert_axis(n: int) -> dict:
    """Integer expert axis 1..n, every expert labelled up to 32 experts (then Plotly thins the labels)."""
    if n <= 32:
        return dict(tickmode="array", tickvals=list(range(1, n + 1)), ticktext=[str(e) for e in range(1, n + 1)])
    return dict(tickmode="auto")


def router_heatmap(table: pd.DataFrame, labels: list[str], title: str, x_title: str, y_title: str,
                   colorbar_title: str, chosen_name: str) -> go.Figure:
    """Tokens x experts heatmap of one block's router probabilities, the experts each token was routed to boxed.

    Args:
        table: ``analysis.experts.router_table`` (position, expert, probability, chosen, rank, weight).
        labels: one tick label per position (``Explorer.tick_labels``).
        chosen_name: the name of the boxes' trace; no legend is drawn, so ``x_title`` should say what they are.
    Returns:
        A ``go.Heatmap`` (rows = positions top to bottom, columns = experts 1..E; z = probability, each row sums
        to 1) and one ``go.Scatter`` of lines: a box around every chosen cell (``table.chosen``), one trace so
        that it scales with the axes at any size. Cell text (the probability) up to
        ``CELL_TEXT_MAX_TOKENS`` tokens and ``CELL_TEXT_MAX_EXPERTS`` experts; the hover names the token, the
        expert, the probability and, for a chosen expert, its rank and the weight of its output.
    """
    T = int(table["position"].max()) + 1
    E = int(table["expert"].max()) + 1
    z = f32(table["probability"].to_numpy().reshape(T, E))
    rank = table["rank"].to_numpy().reshape(T, E)
    weight = table["weight"].to_numpy().reshape(T, E)
    rows = labels[:T]
    custom = [[[rows[p], number(weight[p, e], ".3f") if rank[p, e] else "—", int(rank[p, e]) or "—"]
               for e in range(E)] for p in range(T)]
    heat = go.Heatmap(
        # from 0 to the largest probability shown: a random-init router is close to uniform (1/E everywhere), and
        # on a 0..1 scale every cell would look the same pale blue; the cells' numbers say the values
        z=z, x=np.arange(1, E + 1), y=np.arange(T), zmin=0.0, zmax=float(np.nanmax(z)) if np.isfinite(z).any() else 1.0,
        colorscale=SEQUENTIAL,
        colorbar=dict(title=dict(text=colorbar_title)), customdata=custom,
        meta=dict(token_fields=["customdata"]),  # tokens (and numbers), not UI text
        hovertemplate=t("experts.fig.hover") + "<extra></extra>",
    )
    if T <= CELL_TEXT_MAX_TOKENS and E <= CELL_TEXT_MAX_EXPERTS:
        heat.update(text=cells(z, ".2f"), texttemplate="%{text}", textfont=dict(size=11))
    xs, ys = [], []
    for p, e in zip(*np.nonzero(rank)):  # the box around cell (p, e): x = e + 1, y = p
        x0, x1, y0, y1 = e + 1 - 0.5 + INSET, e + 1 + 0.5 - INSET, p - 0.5 + INSET, p + 0.5 - INSET
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    # no legend (a legend row beside a wrapped title collides with it on a projector): the x-axis title says
    # what the boxes are
    boxes = go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=CHOSEN_COLOR, width=2.5), name=chosen_name,
                       hoverinfo="skip", showlegend=False)
    fig = go.Figure([heat, boxes])
    base_layout(fig, title, x_title, y_title, height=max(380, min(760, 160 + 22 * T)))
    fig.update_xaxes(**_expert_axis(E), range=[0.5, E + 0.5], showgrid=False, zeroline=False)
    fig.update_yaxes(**position_axis(rows), range=[T - 0.5, -0.5], showgrid=False, zeroline=False)
    return fig


def load_bar(load: pd.DataFrame, uniform: float, title: str, x_title: str, y_title: str,
             uniform_text: str) -> go.Figure:
    """Bars of the share of tokens routed to each expert (``analysis.experts.expert_load``), in percent, with
    the even share k/E as a dashed line.

    Args:
        load: columns expert, tokens, share (sums to k), mean_probability.
        uniform: k/E (a fraction); uniform_text: the line's label.
    Returns:
        One ``go.Bar`` (x = experts 1..E, y = share x 100, orange above the even share, blue otherwise) and the
        even share as a dashed ``go.Scatter`` line across the plot (its hover: ``uniform_text``); no legend, so
        ``x_title`` should say what the line is.
    """
    E = len(load)
    pct = f32(load["share"].to_numpy() * 100.0)
    even = uniform * 100.0
    colors = [ABOVE if p > even + 1e-6 else BELOW for p in pct]
    fig = go.Figure(go.Bar(
        x=np.arange(1, E + 1), y=pct, marker_color=colors, text=[number(p, ".0f") + "%" for p in pct],
        textposition="auto", insidetextanchor="end", customdata=load["tokens"].to_numpy(), showlegend=False,
        hovertemplate=t("experts.fig.load_hover") + "<extra></extra>",
    ))
    # the even share as a line across the plot; no label on the plot (it would sit on a bar) and no legend (it
    # collides with the title on a projector): the page's x-axis title names the line
    fig.add_trace(go.Scatter(x=[0.5, E + 0.5], y=[even, even], mode="lines", name=uniform_text,
                             hovertemplate=uniform_text + "<extra></extra>",
                             line=dict(color="black", dash="dash", width=2), showlegend=False))
    base_layout(fig, title, x_title, y_title, height=360)
    top = float(np.nanmax(pct)) if len(pct) else 100.0
    fig.update_xaxes(**_expert_axis(E), range=[0.5, E + 0.5])
    fig.update_yaxes(range=[0, max(top, even) * 1.1 + 1], ticksuffix="%")
    return fig
