"""Figures of the logit-lens & tokenizers page (pure builders, no Streamlit).

Token text shown inside Plotly goes through :func:`plotly_text`: Plotly reads ``<b>``, ``<br>`` and entities in
text, so a token such as ``<|endoftext|>`` would vanish or be read as markup; escaped it is
shown literally.
"""

from __future__ import annotations

import html
import re
import unicodedata

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout, f32, mark_window

LENS_TEXT_MAX_CELLS = 31 * 24  # per-cell token text up to this many cells (SmolLM2: 31 depths x 24 positions)
LENS_CELL_WIDTH = 6  # display columns of token text per cell (20 positions across a 1280-pixel screen; CJK = 2)
_BYTES = re.compile(r"‹[0-9A-F ]+›")
_FRACTION = re.compile(r"[₀-₉]+/[₀-₉]+")


def plotly_text(s: str) -> str:
    """``s`` escaped so Plotly draws it literally (``<`` ``>`` ``&`` as entities)."""
    return html.escape(s, quote=False)


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cell_label(label: str, width: int = LENS_CELL_WIDTH) -> str:
    """A token label that fits one heatmap cell (unescaped; the hover keeps the full label).

    Bytes ``‹E5 85›`` are written without spaces (``‹E585›``); if that is still wider than ``width`` display columns
    (a CJK character counts two), the part marks go (``‹8A›床₂/₂`` -> ``‹8A›床``); what is still too wide is cut,
    ending in ``…``.
    """
    short = _BYTES.sub(lambda m: m.group(0).replace(" ", ""), label)
    for candidate in (short, _FRACTION.sub("", short)):
        if sum(_width(ch) for ch in candidate) <= width:
            return candidate
    short = _FRACTION.sub("", short)
    out, used = "", 0
    for ch in short:
        if used + _width(ch) > width - 1:  # keep one column for the ellipsis
            break
        out, used = out + ch, used + _width(ch)
    return out + "…"


def lens_heatmap(df: pd.DataFrame, top_labels: dict[tuple[int, int], str], depth_labels: list[str], position_labels: list[str],
                 title: str, x_title: str, y_title: str, colorbar_title: str, hover: str,
                 first: tuple[int, int] = (0, 0)) -> go.Figure:
    """Depth x position heatmap of the logit lens: colour = lens probability of the model's final prediction,
    text = the lens's top token, shortened to its cell (:func:`cell_label`); the hover shows the whole label.

    Args:
        df: ``analysis.lens.logit_lens`` rows for the positions to draw (depth, position, top_id, top_prob,
            final_id, p_final).
        top_labels: visible label per (position, token id): the token as it would follow the input up to that
            position (``Explorer.strings_after``), unescaped.
        depth_labels: one label per depth ("embed", "block 1", ...); position_labels: one per drawn position.
        hover: format string with ``{top}``, ``{top_prob}``, ``{final}``, ``{p_final}`` placeholders.
        first: the (depth, position) of the first row and column drawn (a window; ``df``'s depths count from it),
            so that a lesson's outline of a depth lands on its row.
    Returns:
        One ``go.Heatmap`` on integer coordinates (its ``meta.token_fields`` names the fields that hold model
        tokens: the zh-page test reads interface text only) (x = column index of the drawn positions, y = depth), the last
        depth at the top; per-cell text only up to :data:`LENS_TEXT_MAX_CELLS` cells.
    """
    positions = sorted(df["position"].unique())
    col = {p: i for i, p in enumerate(positions)}
    D, P = int(df["depth"].max()) + 1, len(positions)
    z = np.full((D, P), np.nan, dtype=np.float32)
    text = [[""] * P for _ in range(D)]
    hov = [[""] * P for _ in range(D)]
    for d, p, top, tp, fin, pf in df[["depth", "position", "top_id", "top_prob", "final_id", "p_final"]].itertuples(
            index=False):
        j = col[p]
        z[d, j] = pf
        text[d][j] = plotly_text(cell_label(top_labels[p, top]))  # fits its cell; hover: the whole label
        hov[d][j] = hover.format(top=plotly_text(top_labels[p, top]), top_prob=f"{tp:.3f}",
                                 final=plotly_text(top_labels[p, fin]), p_final=f"{pf:.3f}")
    trace = go.Heatmap(z=z, x=np.arange(P), y=np.arange(D), colorscale="Blues", zmin=0.0, zmax=1.0,
                       customdata=np.array(hov, dtype=object), hovertemplate="%{customdata}<extra></extra>",
                       colorbar=dict(title=dict(text=colorbar_title, side="right")),
                       meta=dict(token_fields=["text", "customdata"]))  # model output, not interface text
    if D * P <= LENS_TEXT_MAX_CELLS:
        trace.update(text=text, texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(trace)
    base_layout(fig, title, x_title, y_title, height=max(360, min(1000, 140 + 24 * D)))
    mark_window(fig, x0=first[1], y0=first[0])
    fig.update_xaxes(tickmode="array", tickvals=list(range(P)), ticktext=[plotly_text(s) for s in position_labels],
                     tickangle=-60 if P > 12 else 0, showgrid=False)
    step = max(1, -(-D // 32))
    fig.update_yaxes(tickmode="array", tickvals=list(range(0, D, step)),
                     ticktext=[depth_labels[i] for i in range(0, D, step)], showgrid=False)
    return fig
