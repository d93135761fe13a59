"""Page styling and presenter mode (a projector in a lecture room).

Every page gets a compact layout (less empty space above the title, a smaller title) so the first chart sits
inside a 1280 × 720 projector screen. Presenter mode additionally enlarges what the back row reads: body
text, captions, slider values, tables, metrics, the navigation (here, in CSS) and every font inside the charts
(``ui.figures.common.scale_fonts``, applied by ``ui.widgets.chart``); the page's explanation, the model sliders
and the secondary panels fold away (each into one line), and the sidebar is narrower.

The first screen: a page draws its head (title, notices, controls) and its main chart inside :func:`stage`, the
chart inside :func:`fill` (``ui.widgets.first_screen`` and ``chart(..., fill=True)`` do both). In presenter mode
the stage is as tall as the viewport and the main chart takes the height its head leaves (CSS flex, with the
chart at ``height="stretch"``: Streamlit sizes the Plotly figure to its element), so a heatmap's height follows
the screen, not the number of tokens. Outside presenter mode both are plain containers.

A phone (a viewport at most ``PHONE_MAX_PX`` wide, where Streamlit stacks columns and folds the sidebar away): the
first screen shows the title, the controls and the main chart; the page's explanation moves below the main chart
(CSS ``order`` inside the stage, so the page's script and the desktop layout are unchanged), the margins at the
sides shrink so the charts take the full width, and the columns of a :func:`pairs` container stay two to a row.
"""

from __future__ import annotations

import streamlit as st

from ui.figures.common import FONT_FAMILY
from ui.i18n import t
from ui.state import control

PRESENTER_KEY = "ui.presenter"
PRESENTER_SCALE = 1.5  # chart fonts in presenter mode: 13 px -> 20 px
STAGE_KEY = "presenter.stage"  # the container of a page's first screen (head + main chart)
FILL_KEY = "presenter.fill"  # the containers of the main chart(s), which fill what the head leaves of the screen
FILL_MIN_REM = 16  # the main chart's least height (a head taller than the screen pushes it down, never to 0)
HEADING_KEY = "presenter.heading"  # the row of the title and the explanation's button
SIDEBAR_REM = 17  # the sidebar's width in presenter mode (Streamlit's default: 300 px)
EXPLAIN_KEY = "page.explain"  # the container of the first screen's "what to look for" box (outside presenter mode)
PAIRS_KEY = "phone.pairs"  # containers whose columns stay two to a row on a phone (see pairs)
PHONE_MAX_PX = 640  # Streamlit stacks columns below this width: a phone held upright (390 px), not a tablet
PHONE_CELL_TEXT_MAX = 36  # numbered heatmap cells a phone shows (a 6 x 6 grid, or 8 tokens' causal triangle)


def css_class(key: str) -> str:
    """The CSS class Streamlit gives an element with this key (characters outside ``[a-zA-Z0-9_-]`` become -)."""
    return "st-key-" + "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "-" for ch in key)


FILL = f'[class*="{css_class(FILL_KEY)}"]'  # every fill container: its key is FILL_KEY + "." + the chart's key
PAIRS = f'[class*="{css_class(PAIRS_KEY)}"]'  # every pairs container: its key is PAIRS_KEY + "." + a name


# Plotly's toolbar sits over the top right of a chart, where a long title ends: hidden in presenter mode and on a
# phone (the chart's data and the chart itself download with the buttons below it; Streamlit's own toolbar, above
# the chart, keeps full screen)
NO_MODEBAR = '[data-testid="stPlotlyChart"] .modebar-container { display: none !important; }'

# Always on. Streamlit's wide layout leaves ~6rem above the title and 5rem at the sides: on a 720-pixel-high
# projector the title and the explanation alone then fill the screen. Slider values use the app's sans font.
PAGE_CSS = f"""<style>
.stMainBlockContainer {{ padding-top: 3.5rem; padding-bottom: 3rem; padding-left: 2.5rem; padding-right: 2.5rem; }}
.stMainBlockContainer h1 {{ font-size: 2.1rem; padding-top: 0.25rem; padding-bottom: 0.5rem; }}
.stMainBlockContainer h3 {{ padding-top: 0.5rem; padding-bottom: 0.25rem; }}
[data-testid="stSliderThumbValue"], [data-testid="stSliderThumbValue"] p,
[data-testid="stSliderTickBar"] p {{ font-family: {FONT_FAMILY}; }}
/* a phone: the controls and the main chart first, the explanation after the chart, charts the screen's width */
@media (max-width: {PHONE_MAX_PX}px) {{
  .stMainBlockContainer {{ padding-left: 1rem; padding-right: 1rem; }}
  .stMainBlockContainer h1 {{ font-size: 1.6rem; }}
  .{css_class(STAGE_KEY)} > :has(> .{css_class(EXPLAIN_KEY)}) {{ order: 1; }}
  {PAIRS} > [data-testid="stLayoutWrapper"] > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {{
    min-width: calc(50% - 0.5rem); }}
  /* a heatmap of more than {PHONE_CELL_TEXT_MAX} cells with numbers: on a phone they overlap; colours only (a tap shows
     the value) */
  [data-testid="stPlotlyChart"] g.hm:has(> g.heatmap-label:nth-of-type({PHONE_CELL_TEXT_MAX + 1})) > g.heatmap-label {{
    display: none; }}
  {NO_MODEBAR}
}}
</style>"""

# Presenter mode: readable from the back of the room. Slider values get their own size and sit above the knob
# (a size inherited from the page text would push them down onto it).
PRESENTER_CSS = f"""<style>
/* presenter mode */
.stMainBlockContainer {{ font-size: 1.3rem; }}
.stMainBlockContainer h1 {{ font-size: 2.1rem; padding-top: 0; padding-bottom: 0; }}
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
/* a narrower sidebar with larger type: more width for the charts, a navigation the room can read */
[data-testid="stSidebar"] {{ width: {SIDEBAR_REM}rem !important; min-width: {SIDEBAR_REM}rem !important;
                            max-width: {SIDEBAR_REM}rem !important; }}
[data-testid="stSidebarNavLink"] p {{ font-size: 1.05rem; line-height: 1.3; }}
[data-testid="stSidebarNavLink"] .stMarkdownEllipsis {{ white-space: normal; overflow: visible; }}
/* the title and the "what to look for" button share a line; the title wraps, the button stays on the right */
.{css_class(HEADING_KEY)} {{ flex-wrap: nowrap; }}
.{css_class(HEADING_KEY)} > :first-child {{ flex: 1 1 auto; min-width: 0; }}
/* the first screen: the page's head and its main chart, one viewport high (padding above: 3.5rem) */
.{css_class(STAGE_KEY)} {{ min-height: calc(100vh - 4.5rem); }}
.{css_class(STAGE_KEY)} :has({FILL}):not([data-testid="stHorizontalBlock"], [data-testid="stColumn"]) {{
  flex: 1 1 0; min-height: {FILL_MIN_REM}rem; display: flex; flex-direction: column; }}
.{css_class(STAGE_KEY)} [data-testid="stHorizontalBlock"]:has({FILL}) {{ flex: 1 1 0; min-height: {FILL_MIN_REM}rem;
                                                                       align-items: stretch; }}
.{css_class(STAGE_KEY)} [data-testid="stColumn"]:has({FILL}) {{ display: flex; flex-direction: column; }}
{FILL} {{ flex: 1 1 0; min-height: {FILL_MIN_REM}rem; }}
{FILL} > *, {FILL} > * > * {{ flex: 1 1 0; min-height: 0; display: flex; flex-direction: column; }}
{NO_MODEBAR}
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


def stage():
    """The container of a page's first screen: its head and its main chart (in presenter mode one viewport high)."""
    return st.container(key=STAGE_KEY)


def pairs(name: str):
    """A container for one row of ``st.columns`` that a phone shows two columns to a row (two short sliders side
    by side; a third, wider column below them), where Streamlit would stack every column on its own row."""
    return st.container(key=f"{PAIRS_KEY}.{name}")


def fill(name: str):
    """The container of a page's main chart ``name`` (inside :func:`stage`; two charts side by side get one each):
    in presenter mode it takes the height the stage's other elements leave."""
    return st.container(key=f"{FILL_KEY}.{name}")

