"""Compare side by side in a real browser (issue 36): on the Attention page a person clicks "Compare", moves B's
heads from 4 to 8, reads the sentence computed from both sides, and opens the address bar's link in a fresh
context, which shows both sides again. At 1280 × 720 in presenter mode A and B stand side by side at one
height; on a 390 × 844 phone they are stacked; both sizes in English and in Chinese. Screenshots in
``screenshots/``."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser_support import (CELL_PX_JS, CHART, NAV_INDEX, SHOTS, assert_clean, click_nav, key_css, open_app,
                                   settle)
from ui.window import COLOUR_CELL_PX
from ui.i18n import catalogs

pytestmark = pytest.mark.browser

SIDEBAR = '[data-testid="stSidebar"]'
MAIN = '[data-testid="stMain"]'
SIDES = {side: key_css(f"attn.heatmap.{side}.chart") + '[data-stale="false"]' for side in "ab"}
LOCALES = {"en": "en-US", "zh": "zh-CN"}


def open_sidebar(page) -> None:
    """On a phone the sidebar starts folded: open it by its button."""
    if page.locator(SIDEBAR).bounding_box()["x"] < 0 or not page.locator(SIDEBAR).is_visible():
        page.locator('[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapsedControl"] button').first.click()
        settle(page)


def boxes(page) -> dict:
    for css in SIDES.values():
        page.locator(f"{css} .main-svg").first.wait_for()
    return {side: page.locator(css).bounding_box() for side, css in SIDES.items()}


def check_sides(page, phone: bool) -> None:
    """Both heatmaps drawn: side by side at one height on a wide screen, B below A on a phone."""
    got = boxes(page)
    a, b = got["a"], got["b"]
    if phone:
        assert b["y"] >= a["y"] + a["height"] - 1 and abs(a["x"] - b["x"]) < 2, got
    else:
        assert abs(a["y"] - b["y"]) < 2 and b["x"] >= a["x"] + a["width"] - 1, got
    titles = page.locator(f"{MAIN} .gtitle").all_text_contents()
    assert any(t.startswith("A ·") for t in titles) and any(t.startswith("B ·") for t in titles), titles
    # each half-width map: a square window of colour-only cells (numbers in the hover), not a few giant rows
    for side, css in SIDES.items():
        drawn = page.evaluate("sel => { " + CELL_PX_JS + """
          const gd = document.querySelector(sel + ' .js-plotly-plot');
          return {cell: cellPx(gd), rows: gd._fullData.find(t => t.type === 'heatmap').z.length}; }""", css)
        assert drawn["cell"]["text"] is None and drawn["cell"]["colour"] >= COLOUR_CELL_PX, (side, drawn)
        assert drawn["rows"] == 22, (side, drawn)  # the default text's 22 positions: all of them fit


def unfold(page, header, inside) -> None:
    """Open the expander ``header`` until ``inside`` is on screen (a click on a header a rerun was still
    redrawing may be lost; a second click on an open one would fold it, so look before each click)."""
    for _ in range(3):
        if inside.first.is_visible():
            return
        header.click()
        try:
            inside.first.wait_for(state="visible", timeout=10_000)
        except PlaywrightTimeout:
            settle(page)
    assert inside.first.is_visible()


def move_heads_to_8(page, heads) -> None:
    """B's heads 4 -> 8 by the keyboard (the options are the divisors of the width 64), as a person does: press,
    look, and press again when a rerun that was still on its way drew the slider back at 4."""
    handle = heads.locator('input[type="range"]').first
    thumb = heads.locator('[data-testid="stSliderThumbValue"]').first
    for _ in range(4):
        settle(page)
        value = thumb.inner_text().strip()
        if value == "8":
            break
        assert value == "4", value
        handle.scroll_into_view_if_needed()
        handle.focus()
        handle.press("ArrowRight")
        try:
            heads.locator('[data-testid="stSliderThumbValue"]', has_text="8").wait_for(timeout=20_000)
        except PlaywrightTimeout:
            pass  # looked at again after the page has settled
    settle(page, 1500)
    assert thumb.inner_text().strip() == "8"


@pytest.mark.parametrize("lang,phone", [("en", False), ("zh", True), ("zh", False), ("en", True)])
def test_compare_from_attention_and_open_its_link(server, browser, lang, phone):
    L = catalogs()[lang]
    size = (390, 844) if phone else (1280, 720)
    if phone:  # the language from the phone's locale (its sidebar starts folded)
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                locale=LOCALES[lang])
        page.set_default_timeout(120_000)
        page.goto(server + "/attention", wait_until="domcontentloaded")
        page.wait_for_selector(CHART, timeout=180_000)
        settle(page)
    else:
        page = open_app(browser, server, *size, lang=lang, presenter=True)
        click_nav(page, NAV_INDEX["attention"])
    try:
        open_sidebar(page)
        page.locator(SIDEBAR).get_by_role("button", name=L["compare.start"], exact=True).click()
        # the rerun that starts comparing has drawn its sidebar (Stop comparing), so the slider below is B's
        page.locator(f'{SIDEBAR} {key_css("compare.stop")}').wait_for(timeout=180_000)
        settle(page)
        assert_clean(page)
        sidebar = page.locator(SIDEBAR)
        heads = sidebar.locator('[data-testid="stSlider"]').filter(has_text=L["cfg.num_attention_heads.label"])
        unfold(page, sidebar.get_by_text(L["cfg.section"]).first, heads)  # presenter mode folds the settings
        move_heads_to_8(page, heads)
        assert_clean(page)
        note = L["compare.unaligned.heads"].format(a=4, b=8, n=4)
        sentence = page.locator(f'{MAIN} [data-testid="stAlert"]').filter(has_text=note)
        sentence.first.wait_for(timeout=180_000)  # B's rerun with 8 heads has finished (a loaded machine: seconds)
        assert sentence.count() == 1
        said = sentence.inner_text()
        assert L["compare.attn_sentence"].split("{")[0] in said  # "The largest attention change is layer ..."
        check_sides(page, phone)
        if phone:  # the sidebar folded again, the charts in sight
            page.locator('[data-testid="stSidebarCollapseButton"] button, [data-testid="stSidebarCollapseButton"]').first.click()
            settle(page)
        SHOTS.mkdir(exist_ok=True)
        sentence.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"compare-attention-{lang}-{size[0]}.png"))
        link = page.url
        assert "compare=b" in link and "cfg.num_attention_heads=8" in link
        fresh = browser.new_page(viewport={"width": size[0], "height": size[1]}, locale=LOCALES[lang])
        try:
            fresh.set_default_timeout(120_000)
            fresh.goto(link, wait_until="domcontentloaded")
            fresh.wait_for_selector(f"{MAIN} h1", timeout=180_000)
            settle(fresh, 1500)
            assert_clean(fresh)
            check_sides(fresh, phone)
            again = fresh.locator(f'{MAIN} [data-testid="stAlert"]').filter(has_text=note)
            again.first.wait_for(timeout=180_000)
            assert again.count() == 1
            fresh.locator(SIDES["b"]).scroll_into_view_if_needed()
            fresh.screenshot(path=str(SHOTS / f"compare-attention-link-{lang}-{size[0]}.png"))
        finally:
            fresh.close()
    finally:
        page.close()
