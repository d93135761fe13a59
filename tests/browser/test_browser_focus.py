"""The focus view in a real browser at 1280 × 720, presenter mode: a chart takes the whole screen (by its Focus
button, or for the page's main chart the key F), with its title, presenter-size fonts and the page's "what to look
for" text; Esc returns to the page. Three pages in English, one in Chinese; screenshots in ``screenshots/``."""

from __future__ import annotations

import pytest

from tests.browser_support import NAV_INDEX, SHOTS, assert_clean, click_nav, open_app, settle
from ui.i18n import catalogs

pytestmark = pytest.mark.browser

VIEW = ".st-key-focus-view"
MIN_FONT_PX = 14  # every label of the chart in focus (title, axis titles, tick labels, colour bar)
# Font sizes of the chart in focus (its SVG text: title, axis titles, ticks, colour bar; not cell text, which is
# fitted to its cell) and its box
MEASURE = """(sel) => {
  const view = document.querySelector(sel), el = view.querySelector('[data-testid="stPlotlyChart"]');
  const svg = [...view.querySelectorAll('.main-svg text')].filter(e => e.textContent.trim()
                && !e.closest('.heatmap-label, .textpoint, .hovertext'));
  return {box: el.getBoundingClientRect().toJSON(), view: view.getBoundingClientRect().toJSON(),
          fonts: svg.map(e => parseFloat(getComputedStyle(e).fontSize)), text: view.innerText};
}"""


def _check_focus(page, lang: str, name: str) -> None:
    L = catalogs()[lang]
    page.locator(VIEW).wait_for()
    settle(page, 1200)
    assert_clean(page)
    m = page.evaluate(MEASURE, VIEW)
    vw, vh = page.viewport_size["width"], page.viewport_size["height"]
    assert (m["view"]["x"], m["view"]["y"], m["view"]["width"], m["view"]["height"]) == (0, 0, vw, vh), m["view"]
    assert m["box"]["height"] >= 0.6 * vh and m["box"]["width"] >= 0.9 * vw, (name, m["box"])  # the chart fills it
    assert m["box"]["y"] >= 0 and m["box"]["y"] + m["box"]["height"] <= vh + 1, (name, m["box"])  # on the screen
    assert min(m["fonts"]) >= MIN_FONT_PX, (name, sorted(m["fonts"])[:5])
    assert L["focus.back"] in m["text"]
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"focus-{name}-{lang}.png"))
    page.keyboard.press("Escape")
    page.locator(VIEW).wait_for(state="detached")
    settle(page)
    assert page.locator('[data-testid="stMain"] h1').is_visible()  # back on the page


def test_focus_view_by_button_and_key_and_esc_returns(server, browser):
    page = open_app(browser, server, 1280, 720, lang="en", presenter=True)
    try:
        L = catalogs()["en"]
        page.locator('[data-testid="stMain"] h1').click()  # the page, not the sidebar's toggle, has the keyboard
        page.keyboard.press("f")  # the main chart's key
        _check_focus(page, "en", "overview")
        for name in ("norms", "attention"):
            click_nav(page, NAV_INDEX[name])
            page.locator('[data-testid="stMain"]').get_by_role("button", name=L["focus.open"]).first.click()
            _check_focus(page, "en", name)
    finally:
        page.close()


def test_focus_view_in_chinese(server, browser):
    page = open_app(browser, server, 1280, 720, lang="zh", presenter=True)
    try:
        L = catalogs()["zh"]
        click_nav(page, NAV_INDEX["lens"])
        page.locator('[data-testid="stMain"]').get_by_role("button", name=L["focus.open"]).first.click()
        _check_focus(page, "zh", "lens")
    finally:
        page.close()
