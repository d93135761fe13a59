"""Page widgets whose valid range depends on the config or the input (layer, head, position sliders).

Rule (docs/architecture.md, "The UI"): such a widget keeps its key, and its session-state value is CLAMPED into the
valid range before it is rendered, with a small caption saying so; it never crashes and never resets silently.
A range with a single value is shown as a caption instead of a slider (Streamlit sliders need min < max).
"""

from __future__ import annotations

import numbers

import streamlit as st

from ui.figures.common import PRESENTER_PLOT_PX
from ui.focus import FOCUS_HEATMAP_PX, FOCUS_PLOT_W, in_focus
from ui.i18n import t
from ui.presenter import presenter_mode
from ui.state import control
from ui.teaching.gate import chart_gate
from ui.window import PRESENTER_HEATMAP_PX, READABLE_CELL_PX, rows_that_fit, window


def clamp_state(key: str, lo, hi, label: str, container=None) -> None:
    """Move ``st.session_state[key]`` into ``[lo, hi]`` when it is outside, with a caption note.

    A missing or non-numeric value is left alone (the widget then uses its own default or the URL value).
    """
    value = st.session_state.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    new = min(max(value, lo), hi)
    if new != value:
        st.session_state[key] = new
        (container or st).caption("⚠️ " + t("common.clamped", name=label, old=value, new=new))


def index_slider(label: str, lo: int, hi: int, key: str, default: int | None = None, container=None,
                 bind: bool = True, help: str | None = None) -> int:
    """An integer slider over ``lo..hi`` (inclusive) with a stable key, clamped and persisted.

    Args:
        label: visible label; key: namespaced widget key (also the URL parameter when ``bind``).
        default: starting value (``lo`` when None).
        container: where to draw (``st`` or a column).
    Returns:
        The selected integer. When ``lo == hi`` no slider is drawn (a caption shows the only value).
    """
    box = container or st
    clamp_state(key, lo, hi, label, box)
    if hi <= lo:
        box.caption(t("ctl.only_one", label=label, value=lo))
        return lo
    start = min(max(lo if default is None else default, lo), hi)  # the slider's own default (ui/state.py)
    return int(control(box.slider, label, key, start, kind="int", lo=lo, hi=hi, bind=bind, help=help))


def window_slider(label: str, n: int, key: str, own_px: float, chart: str, help: str | None = None,
                  container=None, presenter_px: float = PRESENTER_HEATMAP_PX,
                  cell_px: float = READABLE_CELL_PX) -> tuple[int, int]:
    """The rows ``[lo, hi)`` of ``n`` a tall heatmap (the page's main chart ``chart``) draws: as many as fit its
    plot height at the readable minimum (``ui.window``); when not all fit, a slider moves the window (default:
    the last rows). The height is the focus view's (``ui.focus.FOCUS_HEATMAP_PX``) when the chart is in focus,
    the presenter screen's main heatmap's in presenter mode (``presenter_px``; by default
    ``PRESENTER_HEATMAP_PX``, measured on the tallest page heads), else ``own_px`` (the figure's own plot height at
    its tallest); ``cell_px``: a row's least height (colour-only cells: ``COLOUR_CELL_PX``). A lesson's revealed
    row (its outline) is always inside the window."""
    size = rows_that_fit(_plot_px(chart, FOCUS_HEATMAP_PX, presenter_px, own_px), cell_px)
    if n <= size:
        return 0, n
    row = spot_at(chart, "y")
    if row is not None and 0 <= row < n:  # a lesson's revealed row: the window moves to show it (as a clamp would)
        lo, hi = window(n, size, st.session_state.get(key, n - size))
        if not lo <= row < hi:
            st.session_state[key] = row if row < lo else row - size + 1
    start = index_slider(label, 0, n - size, key, default=n - size, help=help, container=container)
    return window(n, size, start)


def _plot_px(chart: str, focus_px: float, presenter_px: float, own_px: float) -> float:
    """The page's main heatmap's plot length along one axis: in the focus view, on a presenter page, or its own."""
    return focus_px if in_focus(chart, main=True) else presenter_px if presenter_mode() else own_px


def spot_at(chart: str, axis: str) -> int | None:
    """The row (``axis="y"``) or column (``"x"``) a lesson's revealed answer outlines in ``chart``, as a whole
    number (a position, a depth), or None: nothing revealed, or a part named otherwise."""
    _hide, spot = chart_gate(chart)
    value = (spot or {}).get(axis)
    return int(value) if isinstance(value, numbers.Number) and float(value).is_integer() else None


def column_window(end: int, own_px: float, chart: str, presenter_px: float = PRESENTER_PLOT_PX[0]) -> tuple[int, int]:
    """The columns ``[lo, hi)`` of ``0..end`` the page's main heatmap ``chart`` draws at the readable minimum, on a
    plot as wide as the focus view's, a presenter screen's (``presenter_px``) or ``own_px``: the last ones (the
    keys the window's last query sees nearest), moved to show the column a revealed lesson answer outlines."""
    size = min(end, rows_that_fit(_plot_px(chart, FOCUS_PLOT_W, presenter_px, own_px)))
    lo = end - size
    col = spot_at(chart, "x")
    if col is not None and 0 <= col < lo:
        lo = col
    return lo, min(lo + size, end)
