"""Page styling and presenter mode (a projector in a lecture room).

Every page gets a compact layout (less empty space above the title, a smaller title) so the first chart sits
inside a 1280 × 720 projector screen. Presenter mode additionally enlarges what the back row reads: body
text, captions, slider values, tables, metrics (here, in CSS) and every font inside the charts
(``ui.figures.common.scale_fonts``, applied by ``ui.widgets.chart``); the page's explanation and the model
sliders fold away.
"""

from __future__ import annotations

import streamlit as st

from ui.figures.common import FONT_FAMILY
from ui.i18n import t
from ui.state import control

PRESENTER_KEY = "ui.presenter"
PRESENTER_SCALE = 1.5  # chart fonts in presenter mode: 13 px -> 20 px

# Always on. Streamlit's wide layout leaves ~6rem above the title and 5rem at the sides: on a 720-pixel-high
# projector the title and the explanation alone then fill the screen. Slider values use the app's sans font.
PAGE_CSS = f"""<style>
.stMainBlockContainer {{ padding-top: 3.5rem; padding-bottom: 3rem; padding-left: 2.5rem; padding-right: 2.5rem; }}
.stMainBlockContainer h1 {{ font-size: 2.1rem; padding-top: 0.25rem; padding-bottom: 0.5rem; }}
.stMainBlockContainer h3 {{ padding-top: 0.5rem; padding-bottom: 0.25rem; }}
[data-testid="stSliderThumbValue"], [data-testid="stSliderThumbValue"] p,
[data-testid="stSliderTickBar"] p {{ font-family: {FONT_FAMILY}; }}
</style>"""

# Presenter mode: readable from the back of the room. Slider values get their own size and sit above the knob
# (a size inherited from the page text would push them down onto it).
PRESENTER_CSS = f"""<style>
/* presenter mode */
.stMainBlockContainer {{ font-size: 1.3rem; }}
.stMainBlockContainer h1 {{ font-size: 2.6rem; }}
.stMainBlockContainer h3 {{ font-size: 1.8rem; }}
.stMainBlockContainer [data-testid="stMarkdownContainer"] p,
.stMainBlockContainer [data-testid="stMarkdownContainer"] li {{ font-size: 1.3rem; }}
.stMainBlockContainer [data-testid="stCaptionContainer"],
.stMainBlockContainer [data-testid="stCaptionContainer"] p {{ font-size: 1.15rem; }}
.stMainBlockContainer [data-testid="stWidgetLabel"] p {{ font-size: 1.2rem; }}
.stMainBlockContainer [data-testid="stExpander"] summary p {{ font-size: 1.2rem; }}
.stMainBlockContainer [data-testid="stMetricValue"] {{ font-size: 2.6rem; }}
.stMainBlockContainer [data-testid="stDataFrame"] {{ font-size: 1.1rem; }}
.stMainBlockContainer .stButton button p {{ font-size: 1.2rem; }}
.stMainBlockContainer [data-testid="stNumberInput"] input,
.stMainBlockContainer [data-baseweb="select"] {{ font-size: 1.2rem; }}
.stMainBlockContainer [data-testid="stSliderThumbValue"] {{ font-size: 1.3rem; top: -1.7em; }}
.stMainBlockContainer [data-testid="stSliderThumbValue"] p {{ font-size: inherit; line-height: 1.2; }}
.stMainBlockContainer [data-testid="stSliderTickBar"] p {{ font-size: 1.05rem; }}
.stMainBlockContainer [data-testid="stSlider"] > [role="group"] {{ margin-top: 1.1rem; }}
</style>"""


def presenter_mode() -> bool:
    """Whether the presenter toggle (``"ui.presenter"``) is on."""
    return bool(st.session_state.get(PRESENTER_KEY, False))


def presenter_toggle() -> None:
    """The presenter-mode toggle in the sidebar and the page CSS (compact always, large in presenter mode).

    Drawn by :func:`ui.state.control` like every sidebar control, so a value set by a link survives page switches.
    """
    control(st.sidebar.toggle, t("ui.presenter"), PRESENTER_KEY, False, kind="bool", help=t("ui.presenter.help"))
    st.html(PAGE_CSS + (PRESENTER_CSS if presenter_mode() else ""))
