"""Focus view: one chart takes the whole screen, for a projector.

A chart's "Focus" button (the page's main chart: also the key F) stores the chart's key in the session; on every
run after it, :func:`in_focus` says which chart of the page is drawn in the focus view: a fixed layer over the
page (sidebar and lesson banner included) holding a "Back" button (also Esc), the chart at the screen's height
with presenter-size fonts, and the page's "what to look for" sentence under it. The page underneath is drawn as
always, so its buttons' keys keep working: in a lesson PageDown still moves the lesson, and focus follows it:

- in a lesson, the step's chart (its ``chart`` list's first key) when the step is on this page;
- else the chart chosen, when it is on this page (keys are namespaced by page: ``lens.heatmap``);
- else the page's main chart (``chart(..., fill_screen=True)``), so a lecturer moving to another page keeps a
  chart in focus.

A chart waiting for a lesson's answer is not drawn, so nothing is in focus until the reveal (the banner with
its question is then on screen).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st

from ui.i18n import t
from ui.teaching.steps import active_step

FOCUS_KEY = "ui.focus"  # the key of the chart chosen for the focus view; absent or "" when none
VIEW_KEY = "focus.view"  # the container of the focus view (CSS class st-key-focus-view)
CHART_KEY = "focus.chart"  # the container of its chart, which takes the height the rest leaves
OPEN_SHORTCUT = "F"  # the page's main chart's Focus button
# At 1280 x 720 the chart in focus is about this high (the screen less the Back row and the sentence below; the
# figure is stretched to its element, this sizes its fonts) and a heatmap's plot area (less the title, slanted
# token labels and margins) about FOCUS_HEATMAP_PX: 16 rows of 16 px. tests/browser/test_browser_focus.py measures.
FOCUS_FIG_PX = 540
FOCUS_PLOT_W = 900  # its plot area's width (the screen less the padding, the tick labels and a colour bar)
FOCUS_HEATMAP_PX = 256
_EXPLANATION: ContextVar = ContextVar("focus_explanation", default="")  # the page's "what to look for" text

CSS = """<style>
.st-key-focus-view { position: fixed; inset: 0; z-index: 1000001; background: #fff; overflow: auto;
                     padding: 0.6rem 2rem 0.6rem 2rem; display: flex; flex-direction: column; gap: 0.4rem; }
.st-key-focus-view :has(.st-key-focus-chart):not(.st-key-focus-chart *) { flex: 1 1 0; min-height: 16rem;
                                                                          display: flex; flex-direction: column; }
.st-key-focus-chart { flex: 1 1 0; min-height: 16rem; }
.st-key-focus-chart > *, .st-key-focus-chart > * > * { flex: 1 1 0; min-height: 0; display: flex;
                                                      flex-direction: column; }
.st-key-focus-view [data-testid="stMarkdownContainer"] p { font-size: 1.2rem; }
.st-key-focus-view [data-testid="stPlotlyChart"] .modebar-container { display: none !important; }
</style>"""


def _page(key: str) -> str:
    return key.partition(".")[0]


def chosen() -> str:
    """The key of the chart chosen for the focus view ("" when the focus view is off)."""
    return str(st.session_state.get(FOCUS_KEY) or "")


def in_focus(key: str, main: bool) -> bool:
    """Whether chart ``key`` (``main``: the page's main chart) is drawn in the focus view on this run."""
    want = chosen()
    if not want:
        return False
    found = active_step()
    if found and found[1].chart and _page(found[1].chart[0]) == _page(key):
        return key == found[1].chart[0]
    if _page(want) == _page(key):
        return key == want
    return main


def _open(key: str) -> None:
    st.session_state[FOCUS_KEY] = key


def close() -> None:
    st.session_state[FOCUS_KEY] = ""


def focus_button(key: str, main: bool, container) -> None:
    """The chart's Focus button in ``container`` (the page's main chart's also answers the key F)."""
    container.button(t("focus.open"), key=f"{key}.focus", on_click=_open, args=(key,), help=t("focus.open_help"),
                     icon=":material/fullscreen:", shortcut=OPEN_SHORTCUT if main else None)


@contextmanager
def page_explanation(text: str):
    """While a page's first screen is drawn: its "what to look for" text, shown under a chart in focus."""
    token = _EXPLANATION.set(text)
    try:
        yield
    finally:
        _EXPLANATION.reset(token)


@contextmanager
def focus_view(hint):
    """The focus view's layer: the Back button, then (the ``with`` block) the chart, drawn inside
    ``st.container(key=CHART_KEY)`` at ``height="stretch"``, then the page's explanation through ``hint`` (the
    function that says "it waits" while a lesson's question is open)."""
    with st.container(key=VIEW_KEY):
        st.html(CSS)
        row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
        row.button(t("focus.back"), key="focus.back", on_click=close, shortcut="Escape", type="primary",
                   icon=":material/fullscreen_exit:")
        if active_step():
            row.caption(t("focus.lesson"))
        with st.container(key=CHART_KEY):
            yield
        text = _EXPLANATION.get()
        if text:
            st.markdown(hint(text))
