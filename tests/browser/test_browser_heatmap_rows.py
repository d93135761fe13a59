"""Tall heatmaps stay legible on a 1280 × 720 projector: in presenter mode with SmolLM2 (31 depths, long input)
the logit lens's and attention's main heatmaps draw no row or column thinner than ``READABLE_CELL_PX``
(ui/window.py draws a window of rows instead). Prints the measured table; screenshots land in ``screenshots/``."""

from __future__ import annotations

import pytest

from tests.browser_support import CHART, NAV_INDEX, SHOTS, assert_clean, choose_smollm2, click_nav, open_app, settle
from ui.window import READABLE_CELL_PX

pytestmark = pytest.mark.browser

# The page's main heatmap (its first chart): rows and columns drawn and the plot area's px per row / column.
CELLS = """() => {
  const gd = document.querySelector('[data-testid="stMain"] [data-testid="stPlotlyChart"] .js-plotly-plot');
  const fl = gd._fullLayout, z = gd._fullData[0].z;
  return {rows: z.length, cols: z[0].length, row_px: fl.yaxis._length / z.length, col_px: fl.xaxis._length / z[0].length};
}"""


def test_heatmap_rows_readable_with_smollm2(server, browser):
    page = open_app(browser, server, 1280, 720, lang="en", presenter=True, timeout=420_000)
    try:
        choose_smollm2(page, "en")
        seen = {}
        for name in ("lens", "attention"):
            click_nav(page, NAV_INDEX[name], timeout=420_000)
            page.wait_for_selector(f'[data-testid="stMain"] {CHART}')
            settle(page, 1500)
            assert_clean(page)
            seen[name] = page.evaluate(CELLS)
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / f"heatmap-rows-smollm2-{name}.png"))
        print("\npage        rows  cols  row px  col px")
        for name, m in seen.items():
            print(f"{name:10s} {m['rows']:5d} {m['cols']:5d} {m['row_px']:7.1f} {m['col_px']:7.1f}")
        for name, m in seen.items():
            assert min(m["row_px"], m["col_px"]) >= READABLE_CELL_PX, (name, m)
    finally:
        page.close()
