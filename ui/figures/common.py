"""Shared figure styling: fonts that render Chinese, float32 arrays, axis helpers."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go

# Noto CJK first so Chinese labels never fall back to tofu boxes (fonts-noto-cjk in CI and on servers).
FONT_FAMILY = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, sans-serif"
CELL_TEXT_MAX_TOKENS = 24  # per-cell text on heatmaps only up to this many tokens (slow and unreadable above)
HEATMAP_MAX_TOKENS = 128  # tokens drawn on a heatmap axis at most
# Sizes Streamlit's chart theme gives what a figure leaves unset (px): tick labels, titles of axes, legends,
# colour bars and subplots. Presenter mode must scale these too, so it sets them explicitly.
THEME_TICK_PX, THEME_TITLE_PX = 12, 14
LABEL_EVERY_TOKEN = 64  # a position axis labels every token up to this many (then every 2nd, ...; hover names each)
DENSE_TICKS = 24  # above this many labels on an axis their type shrinks so that each fits its row or column
DENSE_AXIS_PX = 560  # the axis length (px) that type is fitted to outside presenter mode
MIN_TICK_PX = 7  # the smallest type a fitted tick label gets
# One diverging scale with one meaning on every page: red = positive, blue = negative, white = 0.
DIVERGING = "RdBu_r"


def base_layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int = 420) -> go.Figure:
    """Apply the common title, axis titles, font and margins; returns the same figure."""
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left"),
        font=dict(family=FONT_FAMILY, size=13),
        height=height,
        margin=dict(l=60, r=20, t=60, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0),
    )
    # automargin + standoff: the standalone HTML export (no Streamlit theme) keeps axis titles off the tick labels
    fig.update_xaxes(title_text=x_title, automargin=True, title_standoff=10)
    fig.update_yaxes(title_text=y_title, automargin=True, title_standoff=10)
    return fig


def f32(values) -> np.ndarray:
    """A float32 numpy array (half the bytes of float64 in the page payload)."""
    return np.asarray(values, dtype=np.float32)


def position_axis(labels: list[str], max_ticks: int = LABEL_EVERY_TOKEN) -> dict:
    """Axis settings that plot on integer positions and show token text as tick labels.

    Plotting on positions (not on token strings) keeps repeated tokens ("the ... the") as separate rows and
    columns; Plotly would merge identical category labels. Every token is labelled up to ``max_ticks`` tokens,
    every 2nd one up to twice that, and so on; above ``DENSE_TICKS`` labels their type shrinks to fit one row or
    column each (:func:`dense_tick_px`; a column axis should then turn its labels upright, ``tickangle=-90``).
    """
    n = len(labels)
    step = max(1, -(-n // max_ticks))  # thin the ticks on long inputs so labels do not overlap
    ticks = list(range(0, n, step))
    axis = dict(tickmode="array", tickvals=ticks, ticktext=[labels[i] for i in ticks])
    if len(ticks) > DENSE_TICKS:
        axis["tickfont"] = dict(size=dense_tick_px(len(ticks), DENSE_AXIS_PX))
    return axis


def dense_tick_px(n: int, axis_px: float, most: float = THEME_TICK_PX) -> int:
    """The tick font size (px) at which ``n`` labels, one per row or column, fit an axis ``axis_px`` long
    (``most`` at most, ``MIN_TICK_PX`` at least)."""
    return int(max(MIN_TICK_PX, min(most, 0.85 * axis_px / max(n, 1))))


def mark_window(fig: go.Figure, x0: int = 0, y0: int = 0) -> go.Figure:
    """Record that a heatmap drawn on integer coordinates shows a window whose first column is position (or
    depth) ``x0`` and first row ``y0`` (``layout.meta["window"]``): a lesson's highlight names cells by position,
    and ``ui.teaching.highlight`` moves them by these offsets. Returns the same figure."""
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    meta["window"] = {"x": int(x0), "y": int(y0)}
    fig.update_layout(meta=meta)
    return fig


def layer_ticks(n: int) -> dict:
    """Ticks of an axis numbering ``n`` layers (or heads) from 1: every one up to 12, every 2nd up to 24, every
    5th above (5, 10, … 30 for SmolLM2's 30 layers: labels at least 16 px apart on a projector's fill chart)."""
    if n <= 12:
        return dict(tick0=1, dtick=1)
    return dict(tick0=1, dtick=2) if n <= 24 else dict(tick0=0, dtick=5)


def column_tickangle(n: int, labels: list[str] | None = None) -> int:
    """Tick label angle of a column axis with ``n`` token labels: level when few (and, given the ``labels``, when
    they fit side by side at presenter size on a presenter plot's width), slanted, upright when dense."""
    level = n <= 12 and (labels is None or sum(text_width(str(s), PRESENTER_TICK_PX) + 8 for s in labels)
                         <= PRESENTER_PLOT_PX[0])
    return 0 if level else -60 if n <= DENSE_TICKS else -90


def token_pairs(row_labels: list[str], col_labels: list[str]) -> list[list[list[str]]]:
    """Per heatmap cell the row's and the column's token (``customdata``: ``%{customdata[0]}`` names the row's
    token in the hover, ``%{customdata[1]}`` the column's), so the hover names the tokens whatever the ticks show."""
    return [[[r, c] for c in col_labels] for r in row_labels]


PRESENTER_TICK_PX = 20  # a tick label's size in presenter mode (13 px x 1.5)
CLOSING = "）)」』，。、：；！？,.;:!?"
OPENING = "（(「『《“"
PRESENTER_CHART_PX = 840  # a chart's width on a 1280-pixel projector screen, next to the open sidebar
PRESENTER_PLOT_PX = (620, 190)  # a presenter chart's plot-area width, and its height less the figure's (px)
PRESENTER_FILL_PX = 420  # about the height a page's main chart gets on a 1280 x 720 screen (it fills the rest)
MIN_CELL_PX = 8  # heatmap cell numbers smaller than this are left out in presenter mode
FIT_TICKS_ABOVE = 8  # presenter mode fits the tick labels of an axis with more category ticks than this
# A log axis whose every tick label is a full value: without a tick format Plotly labels the ticks between powers
# of ten by their leading digit alone (0.02 reads "2").
LOG_AXIS = dict(type="log", tickformat="~g")


PHONE_PLOT_PX = 200  # the width a legend row gets on a 390-pixel phone screen (measured: 5 filter entries, 5 rows)


def legend_under_title(fig: go.Figure, plot_px: float = PHONE_PLOT_PX) -> go.Figure:
    """The title in its own row at the top, the horizontal legend in the rows below it, the plot below both, with
    room for as many legend rows as the entries need on a plot ``plot_px`` wide (a phone): Plotly puts a legend
    above the plot on the title's line, and on a narrow screen a wrapped legend grows up into the title.
    Returns the same figure."""
    legend_px = fig.layout.legend.font.size or THEME_TITLE_PX
    title_px = fig.layout.title.font.size or round((fig.layout.font.size or THEME_TITLE_PX) * 1.3)
    names = [tr.name for tr in fig.data if tr.showlegend is not False and tr.name]
    entry = max((54 + text_width(n, legend_px) for n in names), default=0.0)  # symbol, name, gap
    rows = max(1, -(-len(names) // max(1, int(plot_px // entry)))) if names else 1
    fig.update_layout(title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=8)),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0.0),
                      margin=dict(t=round(1.4 * title_px + 1.5 * legend_px * rows + 24)))
    return fig


def text_width(text: str, font_px: float) -> float:
    """Rough rendered width (px) of plain text: a Chinese character one em, anything else about half."""
    return sum(font_px if "\u2e80" <= ch <= "\uffef" else 0.55 * font_px for ch in text)


def wrap_lines(text: str, px: float, width_px: float) -> list[str]:
    """``text`` at ``px`` broken into lines no wider than ``width_px`` (after spaces; Chinese anywhere), no line
    starting with a closing mark ("）", "，") or ending with an opening one ("（")."""
    lines, line = [], ""
    for word in re.split(r"(?<= )", text):
        wide = text_width(word, px) > width_px or any("\u2e80" <= ch <= "\uffef" for ch in word)
        pieces = list(word) if wide else [word]
        for piece in pieces:
            if line and text_width(line + piece, px) > width_px:
                head, carry = line, ""
                if piece in CLOSING and len(head) > 1:  # no line starts with "）" or "，"
                    head, carry = head[:-1], head[-1]
                while len(head) > 1 and head[-1] in OPENING:  # and none ends with "（"
                    head, carry = head[:-1], head[-1] + carry
                lines.append(head.rstrip())
                line = carry
            line += piece
    lines.append(line.rstrip())
    return lines


def halves(text: str) -> list[str]:
    """``text`` in two lines as even as can be, broken after a space or beside a Chinese character (no line
    starting with a closing mark or ending with an opening one); one line when it has no such place."""
    cjk = lambda ch: "\u2e80" <= ch <= "\uffef"  # noqa: E731
    cuts = [i for i in range(1, len(text)) if (text[i - 1] == " " or cjk(text[i - 1]) or cjk(text[i]))
            and text[i] not in CLOSING and text[i - 1] not in OPENING]
    if not cuts:
        return [text]
    i = min(cuts, key=lambda i: max(text_width(text[:i], 1), text_width(text[i:], 1)))
    return [text[:i].rstrip(), text[i:].lstrip()]


def wrap_title(fig: go.Figure, width_px: float = PRESENTER_CHART_PX) -> go.Figure:
    """Break a title wider than ``width_px`` into lines (Plotly never wraps a title; it runs off the chart) and
    give the title's lines their room above the plot (the height stays: a presenter chart must fit the screen).
    Returns the same figure."""
    title = fig.layout.title.text
    if not title or "<br>" in title:
        return fig
    px = fig.layout.title.font.size or round((fig.layout.font.size or THEME_TITLE_PX) * 1.3)
    lines = wrap_lines(title, px, width_px)
    if len(lines) == 1:
        return fig
    if fig.layout.title.yref == "container":  # a title in its own row above a legend (legend_under_title)
        top = (fig.layout.margin.t or 0) + round(1.3 * px * (len(lines) - 1))
        fig.update_layout(title_text="<br>".join(lines), margin_t=top)
        return fig
    # above the plot area, which Plotly moves down as far as the lines need (automargin)
    fig.update_layout(title=dict(text="<br>".join(lines), yref="paper", y=1.0, yanchor="bottom", automargin=True,
                                 pad=dict(b=12)))
    return fig


def scale_fonts(fig: go.Figure, factor: float, height: int | None = None, width: int | None = None) -> go.Figure:
    """Multiply every font size of ``fig`` by ``factor`` (presenter mode); returns the same figure.

    Covers the base font, the title, axis tick labels and titles, legend, hover labels, colour bars (of
    traces and colour axes), annotations (subplot titles) and text on bars and heatmap cells (cell text only as
    far as it still fits its cell). Tick labels of an axis with one label per token (or other category) grow
    only as far as each still fits its row or column. The height grows by half the factor so the larger labels
    do not squeeze the plot area, or becomes ``height``; a legend row above the plot moves below the title's row.
    ``width``: the plot area's width when it is not a presenter page's (``PRESENTER_PLOT_PX``; the focus view's).
    """
    plot_width = width or PRESENTER_PLOT_PX[0]
    def up(size, default) -> int:
        return round((size or default) * factor)

    base = fig.layout.font.size or THEME_TITLE_PX
    fig.update_layout(font_size=up(base, base), title_font_size=up(fig.layout.title.font.size, base * 1.3),
                      legend_font_size=up(fig.layout.legend.font.size, THEME_TITLE_PX),
                      hoverlabel_font_size=up(fig.layout.hoverlabel.font.size, THEME_TITLE_PX))
    if height:
        fig.update_layout(height=height)
    elif fig.layout.height:
        fig.update_layout(height=round(fig.layout.height * (1 + (factor - 1) / 2)))
    legend = fig.layout.legend
    shown = [tr for tr in fig.data if tr.showlegend is not False and tr.name]
    if fig.layout.showlegend is not False and len(shown) > 1 and legend.orientation == "h" and (legend.y or 0) >= 1:
        # the enlarged title and the legend rows above the plot would overlap: the title gets its own row on top,
        # the legend as many rows as its enlarged entries need on the presenter plot's width
        legend_under_title(fig, plot_width)

    def axis(ax, length_px: float, title_room: float | None = None) -> None:
        size = up(ax.tickfont.size, THEME_TICK_PX)
        n = len(ax.tickvals) if ax.tickmode == "array" and ax.tickvals is not None else 0
        if n > FIT_TICKS_ABOVE:  # one label per row or column (tokens): no larger than the row or column
            size = dense_tick_px(n, length_px, most=size)
        ax.tickfont.size = size
        if ax.tickmode in (None, "auto", "linear") and ax.dtick is None and ax.tickvals is None and not ax.nticks:
            # Plotly spaces automatic ticks for its own font size: at presenter size as many as the enlarged labels
            # hold (a log axis then labels 1-2-5 or whole decades, never every digit on top of each other)
            ax.nticks = max(3, int(length_px // (TICK_ROOM_EM * size)))
        ax.title.font.size = up(ax.title.font.size, THEME_TITLE_PX)
        text = ax.title.text
        if text and "<br>" not in text and text_width(text, ax.title.font.size) > (title_room or length_px):
            ax.title.text = "<br>".join(halves(text))  # longer than its axis (a low heatmap window's): two lines

    def colorbar(cb) -> None:
        cb.tickfont.size = up(cb.tickfont.size, THEME_TICK_PX)
        cb.title.font.size = up(cb.title.font.size, THEME_TITLE_PX)

    fig.for_each_xaxis(lambda ax: axis(ax, plot_width))
    # a page's main chart (``height`` given: it fills what the page's head leaves) may get as little as
    # FILL_PLOT_PX of plot height under a lesson's banner: its axis titles are fitted to that
    fig.for_each_yaxis(lambda ax: axis(ax, (fig.layout.height or 450) - PRESENTER_PLOT_PX[1], FILL_PLOT_PX if height else None))
    fig.for_each_coloraxis(lambda ca: colorbar(ca.colorbar))
    for ann in fig.layout.annotations:
        ann.font.size = up(ann.font.size, base)
    for tr in fig.data:
        if "colorbar" in tr:
            colorbar(tr.colorbar)
        font = getattr(tr, "textfont", None)
        if font is not None and font.size:
            size = font.size * factor
            if tr.type == "heatmap" and tr.text is not None and tr.z is not None and len(tr.z):
                rows_fit = 0.8 * ((fig.layout.height or 450) - PRESENTER_PLOT_PX[1]) / len(tr.z)
                fit = min(_cell_font_fit(tr, width or CELL_FIT_PLOT_PX), rows_fit)
                if fit < MIN_CELL_PX:  # rows too low for readable numbers: colour only (the hover has them)
                    tr.update(texttemplate=None)
                size = min(size, max(font.size, fit))  # numbers must still fit their cells
            tr.textfont.size = round(size)
    return fig


TICK_ROOM_EM = 2.5  # the room (in font sizes) an automatic tick label gets along its axis in presenter mode
FILL_PLOT_PX = 150  # the least plot height of a page's main chart in presenter mode (a lesson's banner above it)
CELL_FIT_PLOT_PX = 650.0  # the plot width a presenter page's heatmap cells are fitted to


def _cell_font_fit(trace, plot_width: float) -> float:
    """Largest font size (px) at which a heatmap's cell text fits its cells on a projector-wide plot."""
    cols = max(len(row) for row in trace.z)
    chars = max((len(str(v)) for row in trace.text for v in row), default=1)
    return 0.85 * (plot_width / cols) / (0.6 * max(chars, 1))


MINUS = "\u2212"  # Plotly's own minus sign on tick labels
COLORBAR_TICKS = 5  # about this many ticks on a colour bar (1-2-5 steps)


def colorbar_ticks(lo: float, hi: float, count: int = COLORBAR_TICKS) -> tuple[list[float], list[str]]:
    """Tick values and their labels for a linear colour bar from ``lo`` to ``hi``: a 1-2-5 step giving about
    ``count`` ticks, each label with as many digits as the step needs (``±0.004`` -> ``−0.004 … 0.004``, never
    ``0.00``/``−0.00``), zero as ``0``, exponents only when the largest |tick| is below 0.0001 or from 100,000. Empty when the range is not
    a finite, non-empty interval (Plotly's own ticks then)."""
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        return [], []
    raw = (hi - lo) / count
    exp = int(np.floor(np.log10(raw)))
    mant = next(m for m in (1, 2, 5, 10) if m * 10.0 ** exp >= raw * (1 - 1e-9))
    if mant == 10:
        mant, exp = 1, exp + 1
    step = mant * 10.0 ** exp
    first, last = int(np.ceil(lo / step - 1e-9)), int(np.floor(hi / step + 1e-9))
    ks = list(range(first, last + 1))
    values = [k * mant * 10.0 ** exp if exp >= 0 else k * mant / 10.0 ** -exp for k in ks]  # exact 0 at k = 0
    top = max(abs(first), abs(last)) * mant * 10.0 ** exp
    if 1e-4 <= top < 1e5:
        texts = [f"{v:.{max(0, -exp)}f}" for v in values]
    else:  # the digits of k * mant, times a power of ten
        digits = max(len(str(abs(k * mant))) for k in ks)
        texts = [f"{v:.{digits - 1}e}" if k else "0" for k, v in zip(ks, values)]
    texts = ["0" if k == 0 else s.replace("-", MINUS, 1) if s.startswith("-") else s for k, s in zip(ks, texts)]
    return values, texts


def _shown_range(trace) -> tuple[float, float] | None:
    """The colour range a heatmap-like trace shows: zmin/zmax where set, else its data's (symmetric about zmid)."""
    if getattr(trace, "zmin", None) is not None and getattr(trace, "zmax", None) is not None:
        return trace.zmin, trace.zmax
    try:
        z = np.asarray(trace.z, dtype=float)
    except (TypeError, ValueError):
        return None
    z = z[np.isfinite(z)]
    if not z.size:
        return None
    lo, hi = float(z.min()), float(z.max())
    if trace.zmid is not None:
        half = max(abs(hi - trace.zmid), abs(trace.zmid - lo))
        lo, hi = trace.zmid - half, trace.zmid + half
    return (trace.zmin if trace.zmin is not None else lo), (trace.zmax if trace.zmax is not None else hi)


def readable_colorbars(fig: go.Figure) -> go.Figure:
    """Tick every linear colour bar of ``fig`` that has no ticks of its own with :func:`colorbar_ticks` of the
    range it shows (a heatmap's zmin/zmax or data, a colour axis's or marker's cmin/cmax): Plotly's own labels
    read ``400μ`` for 0.0004. Returns the same figure."""
    def tick(cb, rng) -> None:
        if rng is None or cb.tickvals is not None or cb.tickformat:
            return
        values, texts = colorbar_ticks(*rng)
        if len(values) >= 2:
            cb.update(tickmode="array", tickvals=values, ticktext=texts)

    for tr in fig.data:
        if tr.type in ("heatmap", "contour") and tr.showscale is not False and not tr.coloraxis:
            tick(tr.colorbar, _shown_range(tr))
        marker = getattr(tr, "marker", None)
        if marker is not None and "colorbar" in marker and marker.showscale and marker.cmin is not None \
                and marker.cmax is not None:
            tick(marker.colorbar, (marker.cmin, marker.cmax))
    fig.for_each_coloraxis(lambda ca: tick(ca.colorbar, (ca.cmin, ca.cmax)) if ca.cmin is not None
                           and ca.cmax is not None else None)
    return fig
