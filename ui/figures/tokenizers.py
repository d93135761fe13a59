"""Figures of the tokenizer comparison (pure builders, no Streamlit): token counts per tokenizer and the
tokens of a text as coloured chips (HTML)."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from ui.figures.common import base_layout
from ui.figures.lens import plotly_text

CHIP_COLORS = ("#dbeafe", "#fde68a", "#bbf7d0", "#fbcfe8", "#e9d5ff")
PARTIAL_BORDER = "#d62728"  # tokens holding bytes that are no whole character


def tokens_bar(summary: pd.DataFrame, title: str, x_title: str, tokens_name: str, bpt_name: str) -> go.Figure:
    """Token count (bars) and UTF-8 bytes per token (text) per tokenizer (``analysis.tokenizers.compare``)."""
    names = [plotly_text(n) for n in summary["tokenizer"]]
    fig = go.Figure(go.Bar(
        y=names, x=summary["tokens"].to_numpy(), orientation="h", name=tokens_name,
        text=[f"{n} · {b:.2f} {bpt_name}" for n, b in zip(summary["tokens"], summary["bytes_per_token"])],
        textposition="auto", hovertemplate="%{y}: %{x}<extra></extra>", marker_color="#1f77b4",
    ))
    base_layout(fig, title, x_title, "", height=140 + 60 * len(names))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return fig


def token_chips_html(df: pd.DataFrame, hover: str, max_tokens: int = 400) -> str:
    """The tokens of ``analysis.tokenizers.tokenize`` as coloured, HTML-escaped chips, one colour per token in
    turn; a token that holds partial UTF-8 (byte markers) gets a red dashed border.

    ``hover`` is a format string with ``{index}``, ``{id}``, ``{n_bytes}`` and ``{hex}`` (the chip's tooltip).
    """
    chips = []
    for r in df.head(max_tokens).itertuples(index=False):
        border = f"2px dashed {PARTIAL_BORDER}" if not r.whole else "1px solid #94a3b8"
        tip = html.escape(hover.format(index=r.index, id=r.id, n_bytes=r.n_bytes, hex=r.hex))
        chips.append(f'<span title="{tip}" style="background:{CHIP_COLORS[r.index % len(CHIP_COLORS)]};'
                     f'border:{border};border-radius:4px;padding:1px 3px;margin:1px;display:inline-block;'
                     f'font-family:monospace;white-space:pre">{html.escape(r.piece)}</span>')
    return '<div style="line-height:1.9">' + "".join(chips) + "</div>"
