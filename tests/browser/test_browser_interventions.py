"""The Interventions page in a real browser, as a student reaches it (issue 25): a fresh context in presenter mode
at 1280 x 720, SmolLM2 picked in the sidebar, the navigation clicked to Interventions; the induction ablation run
with its button, a cell of the layers x heads map clicked (the before / after view follows it), then the facts
experiment picked, its patching run and a cell of the layer x position map clicked. In English, then in Chinese
(the second language finds both sweeps computed: they are shared per model and prompts, so its maps come at once).

The expected cells are read from the drawn figure itself (its z values), and the sentences are checked against the
same numbers: the page must say what its map shows.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.browser_support import NAV_LINKS, SHOTS, assert_clean, choose_smollm2, click_nav, open_app, settle
from ui.i18n import catalogs

pytestmark = [pytest.mark.browser, pytest.mark.smollm2]

SWEEP_MS = 900_000  # 270 ablations / 30 x 7 patches of SmolLM2 on a loaded 2-core machine

# The drawn figure of the chart with Streamlit key ``key``: z of its heatmap, its y values (1-based layers) and
# the page position of every cell centre.
FIGURE = """(sel) => {
  const gd = document.querySelector(sel + ' .js-plotly-plot');
  if (!gd) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const hm = gd._fullData[0];
  return {z: hm.z, x: Array.from(hm.x), y: Array.from(hm.y),
          left: box.left + xa._offset, top: box.top + ya._offset,
          px: Array.from(hm.x).map(v => xa.l2p(v)), py: Array.from(hm.y).map(v => ya.l2p(v))};
}"""


def css(key: str) -> str:
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


def figure(page, key: str) -> dict:
    fig = page.evaluate(FIGURE, css(key + ".chart"))
    assert fig is not None, key
    fig["z"] = np.array([[np.nan if v is None else v for v in row] for row in fig["z"]], dtype=float)
    return fig


def subheaders(page) -> list[str]:
    return page.locator('[data-testid="stMain"] h3').all_inner_texts()


def click_cell(page, key: str, row: int, col: int, prefix: str) -> str:
    """Click the cell of map ``key`` at heatmap row ``row`` (index into its y) and column ``col`` (index into x), the
    cell's position read from the drawn figure just before the click; returns the subheader starting with ``prefix``
    ("What changed: …") once it names another cell (a click that lands while the page is still rerunning is lost: tried three times)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        settle(page, ms=1000, timeout=300_000)
        before = [h for h in subheaders(page) if h.startswith(prefix)]
        fig = figure(page, key)
        page.mouse.click(fig["left"] + fig["px"][col], fig["top"] + fig["py"][row])
        try:
            page.wait_for_function("([p, old]) => [...document.querySelectorAll('[data-testid=\"stMain\"] h3')]"
                                   ".some(h => h.innerText.startsWith(p) && !old.includes(h.innerText))",
                                   arg=[prefix, before], timeout=120_000)
            settle(page, ms=1500, timeout=300_000)
            return next(h for h in subheaders(page) if h.startswith(prefix))
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def run_or_wait(page, key: str, lang: str) -> None:
    """The sweep's map: press Run when the page offers it (this server has not computed it yet), then wait."""
    L = catalogs()[lang]
    main = page.locator('[data-testid="stMain"]')
    page.wait_for_selector(f'{css(key + ".chart")} .main-svg, {css("interv.run")} button', timeout=300_000)
    if page.locator(css(key + ".chart")).count() == 0:
        page.wait_for_selector(css("interv.preview.chart") + " .main-svg", timeout=300_000)  # the prediction to check
        main.get_by_role("button", name=L["interv.run"]).click()
    page.wait_for_selector(css(key + ".chart") + " .main-svg", timeout=SWEEP_MS)
    settle(page, ms=1500, timeout=300_000)
    assert_clean(page)


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ablate_a_head_patch_a_position_and_click_the_maps(server, browser, lang):
    L = catalogs()[lang]
    page = open_app(browser, server, 1280, 720, lang=lang, presenter=True, timeout=300_000)
    page.set_default_timeout(300_000)
    try:
        choose_smollm2(page, lang)
        names = [a.inner_text().split("\n")[-1] for a in page.locator(NAV_LINKS).all()]
        assert click_nav(page, names.index(L["nav.interventions"]), timeout=420_000) == "interventions"

        # ---- induction: every head removed ----
        run_or_wait(page, "interv.ind_map", lang)
        fig = figure(page, "interv.ind_map")
        assert fig["z"].shape == (30, 9)  # SmolLM2: 30 layers x 9 heads
        top_row, top_col = np.unravel_index(np.nanargmax(fig["z"]), fig["z"].shape)
        top_layer, top_head = int(fig["y"][top_row]), int(top_col) + 1
        text = main_text(page)
        # the page selects the head whose removal costs most, and says so with the map's number
        assert L["interv.ba.ablation"].format(layer=top_layer, head=top_head) in text
        rise = float(fig["z"][top_row, top_col])
        assert rise > 1.0  # SmolLM2's previous-token head: several nats (README)
        lead = L["interv.ind.top"].split("{base}")[0].format(layer=top_layer, head=top_head)
        assert lead in text, (lead, text[:1500])
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"interventions-induction-{lang}.png"))

        # a click on another cell: the pickers, the subheader and the before / after view follow it
        row, col = (top_row + 2) % 30, (top_col + 3) % 9
        got = click_cell(page, "interv.ind_map", row, col, L["interv.ba.ablation"].split("{")[0])
        layer, head = (int(n) for n in re.findall(r"\d+", got)[:2])
        # the clicked cell (Plotly picks the nearest point: a row's neighbour at worst), not the top head any more
        assert abs(layer - int(fig["y"][row])) <= 1 and abs(head - (col + 1)) <= 1, got
        assert (layer, head) != (top_layer, top_head)
        settle(page, ms=1500, timeout=300_000)
        assert_clean(page)
        for key in ("interv.pattern_before", "interv.pattern_after", "interv.tokens"):
            assert page.locator(css(key + ".chart") + " .main-svg").count() >= 1, key
        page.screenshot(path=str(SHOTS / f"interventions-induction-clicked-{lang}.png"), full_page=True)

        # ---- facts: hook_resid_pre patched at every (layer, position) ----
        page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] button',
                     has_text=L["interv.experiment.facts"]).click()
        settle(page, timeout=300_000)
        run_or_wait(page, "interv.res_map", lang)
        fig = figure(page, "interv.res_map")
        assert fig["z"].shape[0] == 30
        # at layer 1 the answer lives only where the prompts differ ("France" vs "Italy"): that column restores it,
        # an identical token restores nothing
        first = fig["z"][0]
        assert np.nanmax(first) > 0.9 and np.nanmin(np.abs(first)) < 0.05, first
        last = int(fig["x"][-1])
        got = click_cell(page, "interv.res_map", 0, int(fig["z"].shape[1]) - 1,  # layer 1, the last position
                         L["interv.ba.patch"].split("{")[0])
        layer, pos = (int(n) for n in re.findall(r"\d+", got)[:2])
        assert layer <= 2 and abs(pos - last) <= 1, got
        settle(page, ms=1500, timeout=300_000)
        assert_clean(page)
        assert page.locator(css("interv.tokens.chart") + " .main-svg").count() >= 1
        page.screenshot(path=str(SHOTS / f"interventions-facts-clicked-{lang}.png"), full_page=True)
    finally:
        page.close()
