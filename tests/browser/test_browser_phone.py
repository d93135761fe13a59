"""A phone held upright (390 × 844, touch): the Attention page opened by its link in a fresh context, in English
and in Chinese. The sidebar starts folded away, the page's controls come first and the head's heatmap starts on
the first screen at the screen's width (the explanation below it), and nothing runs past the right edge: the
page does not scroll sideways and every button, the stage buttons included, is whole on screen (not cut off
by the edge nor hidden in a row that scrolls sideways). A screenshot lands in ``screenshots/``.
"""

from __future__ import annotations

import pytest

from tests.browser_support import CHART, SHOTS, assert_clean, settle

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 390, 844  # an iPhone 12-15 held upright, in CSS pixels
MIN_CHART_WIDTH = WIDTH - 40  # the chart spans the screen but for the page's margins
URL_LANG = {"en": "English", "zh": "中文"}

# Every button in the main area that is not whole inside the viewport or inside an ancestor that clips or
# scrolls sideways (a segmented control too wide for the screen scrolls its buttons out of sight).
CUT_BUTTONS = """() => {
  const vw = window.innerWidth, cut = [];
  for (const b of document.querySelectorAll('[data-testid="stMain"] button')) {
    const r = b.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    let left = 0, right = vw;
    for (let p = b.parentElement; p; p = p.parentElement) {
      if (getComputedStyle(p).overflowX === 'visible') continue;
      const c = p.getBoundingClientRect();
      left = Math.max(left, c.left); right = Math.min(right, c.right);
    }
    if (r.left < left - 0.5 || r.right > right + 0.5)
      cut.push({text: (b.innerText || b.getAttribute('aria-label') || '').trim().slice(0, 30),
                left: Math.round(r.left), right: Math.round(r.right), clipLeft: Math.round(left), clipRight: Math.round(right)});
  }
  return cut;
}"""
WIDE = """() => ({document: document.documentElement.scrollWidth,
             main: document.querySelector('[data-testid="stMain"]').scrollWidth})"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attention_on_a_phone(server, browser, lang):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, is_mobile=True, has_touch=True)
    try:
        page.set_default_timeout(90_000)
        page.goto(f"{server}/attention?ui.lang={URL_LANG[lang]}", wait_until="domcontentloaded")
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=120_000)
        settle(page, 1200)  # a responsive chart takes its final width once after it is drawn
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"phone-attention-{lang}.png"))
        assert_clean(page)
        assert page.locator('[data-testid="stMain"] h1').first.inner_text().startswith(
            "Attention" if lang == "en" else "注意力")

        sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert sidebar is None or sidebar["width"] == 0 or sidebar["x"] + sidebar["width"] <= 0, sidebar
        assert page.locator('[data-testid="stExpandSidebarButton"]').is_visible()

        box = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]').first.bounding_box()
        assert box is not None and 0 <= box["y"] < HEIGHT, f"the heatmap starts at y = {box and box['y']:.0f}"
        assert box["width"] >= MIN_CHART_WIDTH and box["x"] + box["width"] <= WIDTH, box

        wide = page.evaluate(WIDE)
        assert wide["document"] <= WIDTH and wide["main"] <= WIDTH, wide
        assert page.locator('[data-testid="stMain"] button').count() >= 6  # the 4 stage buttons and the downloads
        assert page.evaluate(CUT_BUTTONS) == []
    finally:
        page.close()
