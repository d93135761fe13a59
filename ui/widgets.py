"""Small Streamlit helpers shared by the pages (charts with exports, explanations)."""

from __future__ import annotations

import re
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.figures.common import PRESENTER_CHART_PX, PRESENTER_FILL_PX, readable_colorbars, scale_fonts, wrap_title
from ui.teaching.highlight import highlight
from ui.focus import FOCUS_FIG_PX, FOCUS_PLOT_W, focus_button, focus_view, in_focus, page_explanation
from ui.i18n import t
from ui.teaching.gate import chart_gate, hidden, placeholder_for, predict_first
from ui.teaching.phone.view import share_chart
from ui.presenter import EXPLAIN_KEY, HEADING_KEY, PRESENTER_SCALE, fill, presenter_mode, stage

PLOTLY_CONFIG = {"displaylogo": False}
_BELOW_SCREEN: ContextVar = ContextVar("below_first_screen", default=None)  # see first_screen
_FOCUS_SLOT: ContextVar = ContextVar("focus_slot", default=None)  # presenter mode: the heading row's Focus button


def show_figure(fig: go.Figure, key: str, on_select=None, columns: int = 1, fill_screen: bool = False,
                focus: bool = False) -> None:
    """Draw a figure without exports (live charts); fonts scaled in presenter mode. With ``on_select`` (a
    callback) a click on a point selects it (``st.session_state[key].selection``). ``columns``: the figure is
    one of that many side by side (its title is wrapped to that share of the screen's width). ``fill_screen``:
    the page's main chart, drawn inside :func:`first_screen`; in presenter mode it takes the height the page's
    head leaves on the screen (the figure's own height then does not apply). ``focus``: drawn in the focus
    view (``ui.focus``): presenter-size fonts, the height of the screen."""
    if (presenter_mode() or focus) and not getattr(fig, "_presenter_scaled", False):  # readable from the back
        scale_fonts(fig, PRESENTER_SCALE, height=FOCUS_FIG_PX if focus else PRESENTER_FILL_PX if fill_screen else None,
                    width=FOCUS_PLOT_W if focus else None)
        wrap_title(fig, PRESENTER_CHART_PX / columns)  # a long title at presenter size would run off the screen
        fig._presenter_scaled = True  # a figure shown again (the live panels' between rebuilds) is scaled once
    select = dict(on_select=on_select, selection_mode="points") if on_select is not None else {}
    if focus:
        st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, height="stretch", **select)
    elif fill_screen and presenter_mode():
        with fill(key):
            st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, height="stretch", **select)
    else:
        st.plotly_chart(fig, key=key, config=PLOTLY_CONFIG, **select)


def csv_bytes(data: pd.DataFrame) -> bytes:
    """The table as CSV in UTF-8 with a byte-order mark, so Excel opens Chinese tokens correctly."""
    return data.to_csv(index=False).encode("utf-8-sig")


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
PAGE_NAMES = {"attn": "attention", "gen": "generate", "next": "next-token", "tokcmp": "lens"}  # key prefix -> file name


def _safe(text) -> str:
    return _UNSAFE.sub("-", str(text)).strip("-")


def export_name(key: str, ext: str, view: dict | None = None) -> str:
    """A download name that says what the file holds: page, chart and the view shown (e.g. the layer, head and
    stage), safe characters only: ``attention-heatmap-layer1-head2-softmax.csv`` for key ``attn.heatmap`` and
    view ``{"layer": 1, "head": 2, "stage": "softmax"}``. Layers and heads as the page numbers them (from 1); a
    text value (a stage) stands alone."""
    page, _, chart_name = key.partition(".")
    parts = [PAGE_NAMES.get(page, page), _safe(chart_name.replace("_", "-").replace(".", "-")) or "chart"]
    for name, value in (view or {}).items():
        parts.append(_safe(value) if isinstance(value, str) else f"{_safe(name)}{_safe(value)}")
    return "-".join(p for p in parts if p) + f".{ext}"


def with_view(data: pd.DataFrame, view: dict | None) -> pd.DataFrame:
    """The table with the view as its first columns (``layer``, ``head``, ``stage``...), one value on every row,
    so the file itself says which view it is; columns the table already has are left as they are."""
    extra = {name: value for name, value in (view or {}).items() if name not in data.columns}
    return pd.concat([pd.DataFrame({n: [v] * len(data) for n, v in extra.items()}, index=data.index), data], axis=1) \
        if extra else data


def chart(fig: go.Figure, data: pd.DataFrame | None, key: str, on_select=None, columns: int = 1,
          view: dict | None = None, fill_screen: bool = False) -> None:
    """Show a Plotly figure with its data as CSV and the figure as standalone HTML (PNG: Plotly toolbar).

    ``key`` is a namespaced, stable widget key, e.g. ``"norms.residual"``. With ``on_select`` (a callback) a
    click on a point selects it; the selection is in ``st.session_state[key + ".chart"].selection``.
    ``columns``, ``fill_screen``: see :func:`show_figure`. ``view``: what the chart shows of several (its
    layer, head, stage): in the file names and as the CSV's first columns.
    """
    hide, spot = chart_gate(key)
    if hide:  # a lesson's question is open on this page: predict first
        text = placeholder_for(key)
        if text:
            predict_first(text)
        else:  # another chart of the page: one line, so that its section is not left empty without a word
            st.caption(t("lessons.chart_waits"))
        return
    readable_colorbars(fig)  # tiny ranges (±0.004) labelled with their digits, on the phones too
    if spot:
        highlight(fig, spot, data)
    share_chart(key, fig)  # a class's revealed step: the phones draw this very figure
    main = fill_screen and columns == 1
    focus = in_focus(key, main)
    with focus_view(_hint) if focus else nullcontext():
        show_figure(fig, f"{key}.chart", on_select, columns, fill_screen, focus)
    below = _BELOW_SCREEN.get() if fill_screen and presenter_mode() else None  # the main chart's: below the screen
    row = (below or st).container(horizontal=True, gap="small")  # buttons keep their width, even in narrow columns
    slot = _FOCUS_SLOT.get() if main else None
    if not focus:  # beside the title in presenter mode (the main chart's row is below the screen there)
        focus_button(key, main, slot or row)
    if data is None:
        return
    row.download_button(t("common.download_csv"), lambda: csv_bytes(with_view(data, view)),
                        file_name=export_name(key, "csv", view), mime="text/csv", key=f"{key}.csv", on_click="ignore")
    row.download_button(t("common.download_html"), lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                        file_name=export_name(key, "html", view), mime="text/html", key=f"{key}.html", on_click="ignore")


@contextmanager
def first_screen(title: str, explanation: str):
    """A page's first screen: its title and "what to look for" box, then (the ``with`` block) its notices,
    controls and main chart (``chart(..., fill_screen=True)``). In presenter mode it is one viewport high and the
    main chart fills what the rest leaves; the title and the explanation share one line (the explanation behind
    a button); the main chart's download buttons go below that screen. Outside presenter mode: the title, the
    open explanation, the block (on a phone the explanation is shown after the main chart: ``ui.presenter``)."""
    screen = stage()
    token = _BELOW_SCREEN.set(st.container() if presenter_mode() else None)  # drawn after the stage
    slot = _FOCUS_SLOT.set(None)
    try:
        with screen, page_explanation(explanation):
            if presenter_mode():
                row = st.container(horizontal=True, vertical_alignment="center", gap="medium", key=HEADING_KEY)
                row.title(title)
                _FOCUS_SLOT.set(row.empty())  # the main chart's Focus button
                with row.popover(t("common.what_to_look_for"), icon="💡"):
                    st.markdown(_hint(explanation))
            else:
                st.title(title)
                with st.container(key=EXPLAIN_KEY):
                    explain(explanation)
            yield
    finally:
        _BELOW_SCREEN.reset(token)
        _FOCUS_SLOT.reset(slot)


def screen_heading(text: str) -> None:
    """A heading inside a page's first screen that its controls' labels or its chart's title repeat: left out in
    presenter mode, where that screen has no line to spare."""
    if not presenter_mode():
        st.subheader(text)


def revealed(key: str) -> bool:
    """False while a lesson's question is open on this page (unless the step lists ``key`` under ``show``): every
    sentence, table or metric that reads a chart's numbers out is drawn under ``if revealed(<that chart's key>)``
    and waits with it (``ui.teaching.steps.chart_gate``)."""
    return not chart_gate(key)[0]


AUTO_GFLOP = 10.0  # an extra section costing more (engine/cost.py) waits for its button: about 0.5 s on one laptop core
DECODE_STEP_TOKENS = 8  # a decode step reads every weight for one token: on a CPU it costs at least an 8-token
# forward (SmolLM2, one thread: 16 steps took 0.96 s, 4.7 plain forwards of a 38-token text, 11 tokens' worth each)


def when_asked(key: str, gflop: float, caption: str, label: str) -> bool:
    """Whether a page's extra section (anything after its first chart) is computed in this run: at once when it
    costs at most ``AUTO_GFLOP`` (a small model's sections: a few milliseconds), otherwise once this session pressed
    its button, drawn here under ``caption`` (what it computes and why it waits); once pressed, the section follows
    this session's later settings by itself (``{key}_asked``). So a whole page costs its first chart, never a sweep
    or a dozen backward passes nobody asked for. The caller draws a result some session already computed first (its
    shared cache's ``peek``): a class asking the same thing computes it once."""
    if asked(key, gflop):
        return True
    st.caption(caption)
    st.button(label, key=f"{key}_run", on_click=st.session_state.update, args=({f"{key}_asked": True},))
    return False


def asked(key: str, gflop: float) -> bool:
    """Whether :func:`when_asked` computes its section in this run, without drawing its button (a page that
    chooses what its first chart computes before it draws the button below it)."""
    return gflop <= AUTO_GFLOP or bool(st.session_state.get(f"{key}_asked"))


def on_request(cached, args: tuple, key: str, gflop: float, caption: str, label: str, spinner: str = ""):
    """``cached(*args)`` for a page's extra section (``cached``: a shared cache with ``peek``, server/bytecache.py),
    or None while it waits for its button (:func:`when_asked`): drawn at once when some session computed it."""
    found, value = cached.peek(*args)
    if found:
        return value
    if not when_asked(key, gflop, caption, label):
        return None
    with st.spinner(spinner) if spinner else nullcontext():
        return cached(*args)


def explain(text: str) -> None:
    """The page's two-to-four-sentence "what to look for" box: open for self-study, folded in presenter mode
    (the lecturer says it; the chart gets the screen)."""
    with st.expander(t("common.what_to_look_for"), expanded=not presenter_mode(), icon="💡"):
        st.markdown(_hint(text))


HINT_KEY = "common.what_to_look_for"  # the gate's key of a page's "what to look for" box


def _hint(text: str) -> str:
    """The box's text, or while a lesson's question is open on the page, that it waits: a page's hint says what
    its charts show, which is often the answer (a step may list the box under ``show``)."""
    return t("lessons.hint_waits") if hidden(HINT_KEY) else text


def real_model_notice(source: str) -> None:
    """On the views that need a pretrained model: say plainly when the model is random or seconds-trained (in
    presenter mode in one line)."""
    short = "_short" if presenter_mode() else ""
    if source == "random":
        st.warning(t("views.random_model" + short))
    elif source == "trained":
        st.info(t("views.trained_model" + short))
