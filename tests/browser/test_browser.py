"""Real-browser tests: Debian chromium driven by Playwright against `streamlit run app.py`.

Every page is visited in English and Chinese; no page may show an exception and every chart must render.
Screenshots go to ``screenshots/`` (git-ignored) for a person to look at. A missing chromium is a failure,
not a skip: these tests are the only check that the app works in a browser. The ``server`` and ``browser``
fixtures live in ``tests/conftest.py`` (``tests/browser_support.py``); every test fails on a request to a host
other than the app server.
"""

from __future__ import annotations

import pytest

from tests.browser_support import CHART, SHOTS, settle

pytestmark = pytest.mark.browser

PAGES = ["overview", "norms", "pre-vs-post", "attention", "loss", "next-token", "train"]
URL_LANG = {"en": "English", "zh": "中文"}  # the language switch writes its label into the URL
START = {"English": "▶ Start", "中文": "▶ 开始"}
STOP = {"English": "■ Stop", "中文": "■ 停止"}


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 2600})
    page.goto(url, wait_until="domcontentloaded")
    if "/train" in url:  # the training lab draws its charts once a run starts: start one, then stop it
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=90_000)
        page.get_by_role("button", name=START[url.split("ui.lang=")[-1]]).click()
        page.wait_for_selector(CHART, timeout=120_000)
        page.get_by_role("button", name=STOP[url.split("ui.lang=")[-1]]).click()
        # the run has ended once Start is offered again; then the page reruns into the results (its charts)
        page.get_by_role("button", name=START[url.split("ui.lang=")[-1]]).wait_for(timeout=120_000)
        settle(page)
    page.wait_for_selector(CHART, timeout=90_000)
    page.wait_for_timeout(800)  # let the last reruns settle
    return page


def _assert_clean(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders(server, browser, path, lang):
    page = _open(browser, f"{server}/{path}?ui.lang={URL_LANG[lang]}")
    try:
        _assert_clean(page)
        n = page.locator(CHART).count()
        assert n >= 1, f"{path}: no chart rendered"
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{path}-{lang}.png"), full_page=True)
    finally:
        page.close()


def test_moving_a_slider_updates_a_chart(server, browser):
    page = _open(browser, f"{server}/norms?ui.lang=English")
    try:
        chart = '[data-testid="stPlotlyChart"]'
        before = page.locator(chart).first.inner_html()
        layers = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Layers L")
        handle = layers.locator('input[type="range"]').first
        handle.focus()
        handle.press("ArrowRight")  # layers 2 -> 3
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerHTML !== old; }",
            arg=[chart, before], timeout=60_000,
        )
        # the first change of the chart's HTML may be Streamlit marking it stale, not the new figure: wait (a
        # loaded machine) until Plotly has drawn the new figure's four main ticks, then check everything
        page.wait_for_function("sel => document.querySelector(sel).querySelectorAll('.xtick').length === 4",
                               arg=chart, timeout=60_000)
        page.wait_for_timeout(500)
        _assert_clean(page)
        assert "cfg.num_hidden_layers=3" in page.url  # the view is in the URL
        # the residual-norm chart now has L + 1 = 4 depths (embedding output, blocks 1..3) on its main x axis
        # and the final norm alone on its own axis (x2)
        first = page.locator(chart).first
        assert first.locator(".xtick").count() == 4
        assert first.locator(".x2tick").count() == 1
    finally:
        page.close()
