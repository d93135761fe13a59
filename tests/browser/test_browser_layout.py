"""Projector layout in a real browser: 1280 × 720, presenter mode on, every page reached by clicking the
navigation (never ``page.goto`` per page).

On every page the top of the first chart lies inside the viewport without scrolling (on Pre vs Post the whole
chart), chart tick labels are enlarged (presenter mode scales the charts, not only the headings), and slider
values sit above their knob in the app's sans font. Screenshots land in ``screenshots/`` for a person to look at.
"""

from __future__ import annotations

import pytest

from tests.browser_support import CHART, NAV_LINKS, SHOTS, assert_clean, click_nav, open_app, settle

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
PRESENTER_TICK_PX = 18  # chart fonts: 13 px normally, 20 px in presenter mode
WHOLE_FIRST_CHART = {"pre-vs-post"}  # pages whose whole first chart is on the first screen (a line chart to talk over)

FIRST_CHART = """() => {
  const c = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"]');
  if (!c) return null;
  const tick = c.querySelector('.xtick text, .ytick text');
  return {top: c.getBoundingClientRect().top, bottom: c.getBoundingClientRect().bottom, scrollY: window.scrollY,
          tickPx: tick ? parseFloat(getComputedStyle(tick).fontSize) : null,
          title: (c.querySelector('.gtitle') || {}).textContent || ''};
}"""

SLIDER_VALUES = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSliderThumbValue"]')]
  .map(v => { const knob = v.closest('[data-testid="stSlider"]').querySelector('[role="group"] input').closest('div[style]').parentElement;
              const k = knob.getBoundingClientRect(), b = v.getBoundingClientRect();
              return {valueBottom: b.bottom, knobTop: k.top, font: getComputedStyle(v.querySelector('p') || v).fontFamily}; })"""


def _first_chart(page, path: str, lang: str) -> dict:
    if path == "train":  # the training lab draws its first chart once a run is going: start one, stop it after
        page.locator('[data-testid="stMain"] button[kind="primary"]').first.click()  # ▶ Start
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=420_000)
        page.wait_for_timeout(500)
        info = page.evaluate(FIRST_CHART)
        page.locator('[data-testid="stMain"] button:has-text("■")').first.click()  # ■ Stop
        settle(page)
        return info
    page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=120_000)
    return page.evaluate(FIRST_CHART)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_projector_first_chart_in_view_on_every_page(server, browser, lang):
    page = open_app(browser, server, WIDTH, HEIGHT, lang=lang, presenter=True)
    try:
        n = page.locator(NAV_LINKS).count()
        assert n >= 8  # every page of app.py
        seen = {}
        for i in range(n):
            path = click_nav(page, i) if i else "overview"
            assert_clean(page)
            info = _first_chart(page, path or "overview", lang)
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / f"projector-{path or 'overview'}-{lang}.png"))
            assert info is not None, f"{path}: no chart"
            assert info["scrollY"] == 0
            assert 0 <= info["top"] < HEIGHT - 120, f"{path}: first chart starts at y={info['top']:.0f} of {HEIGHT}"
            assert info["tickPx"] is not None and info["tickPx"] >= PRESENTER_TICK_PX, (path, info)
            if path in WHOLE_FIRST_CHART:
                assert info["bottom"] <= HEIGHT, f"{path}: first chart ends at y={info['bottom']:.0f} of {HEIGHT}"
            seen[path or "overview"] = info
            for s in page.evaluate(SLIDER_VALUES):
                assert s["valueBottom"] <= s["knobTop"] + 1, f"{path}: slider value sits on its knob: {s}"
                assert "Noto Sans" in s["font"], s["font"]  # the app's sans font, never a serif fallback
        # the Overview's first chart is the parameter chart, also in presenter mode
        assert ("Parameters" if lang == "en" else "参数") in seen["overview"]["title"]
    finally:
        page.close()
