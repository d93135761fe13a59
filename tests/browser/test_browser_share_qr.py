"""The share panel's QR code (issue 22): the code drawn is the link the address bar holds, and it opens full
screen for the projector.

In English at 1280 x 720 in presenter mode a fresh context clicks to the Attention page, moves the Layer slider,
opens "Share & export" and reads the link printed under the code: it is the address bar's link (same path, same
parameters), and the image is the QR code of exactly that text (its modules against ``segno.make(text)``, see
tests/ui/test_share_qr.py; no decoder is installed). Then Generate: one "Next token" click writes the step count
into the link after the sidebar is drawn, and the panel's code follows it (before ``ui.share.refresh_qr`` it kept
the link without the step). The full-screen button opens a dialog whose code fills most of the window's height,
fully on screen, with the link below it in large type. In Chinese on a 390 x 844 phone the same panel and dialog.
Every request of these pages goes to the app server (the code is a ``data:`` image; ``offline_guard`` checks).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser_support import CHART, NAV_INDEX, SHOTS, assert_clean, click_nav, open_app, settle
from tests.ui.test_share_qr import reference_modules, svg_modules
from ui.i18n import catalogs

pytestmark = pytest.mark.browser

SIDEBAR = '[data-testid="stSidebar"]'
DIALOG = '[role="dialog"]'


# how many lines the first n characters of an element's text take (its text is split by <wbr> elements)
LINES_OF_PREFIX = """(e, n) => {
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT), range = document.createRange();
  range.setStart(e, 0);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (n <= node.length) { range.setEnd(node, n); break; }
    n -= node.length;
  }
  return new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top))).size;
}"""


def same_link(a: str, b: str) -> bool:
    """Two links to the same view: same host, path and parameters (the order and the percent-encoding of the
    browser's address may differ from the server's)."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.netloc, pa.path, parse_qs(pa.query)) == (pb.netloc, pb.path, parse_qs(pb.query))


def panel_code(page, scope: str = SIDEBAR) -> str:
    """The link printed under the code in ``scope``, after checking that the image is that link's QR code."""
    block = page.locator(f"{scope} .share-qr").first
    block.wait_for()
    text = block.locator(".share-qr-link").inner_text().strip()
    src = block.locator("img.share-qr-img").get_attribute("src")
    assert src.startswith("data:image/svg+xml"), src[:40]  # drawn here, nothing fetched
    assert svg_modules(src) == reference_modules(text), f"the image is not the QR code of the link shown: {text!r}"
    return text


def open_panel(page, lang: str) -> None:
    L = catalogs()[lang]
    page.locator(SIDEBAR).get_by_text(L["share.title"]).click()
    page.locator(f"{SIDEBAR} .share-qr").first.wait_for()
    settle(page)


def full_screen(page, lang: str, shot: str) -> str:
    """Click the full-screen button; check the dialog's code is large and on screen; return its link."""
    L = catalogs()[lang]
    button = page.locator(SIDEBAR).get_by_role("button", name=L["share.qr_full"])
    button.scroll_into_view_if_needed()
    button.click()
    page.locator(f"{DIALOG} .share-qr").wait_for()
    settle(page)
    assert L["share.qr_title"] in page.locator(DIALOG).inner_text()
    link = panel_code(page, DIALOG)
    view = page.viewport_size
    box = page.locator(f"{DIALOG} img.share-qr-img").bounding_box()
    assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= view["width"]
    assert box["y"] + box["height"] <= view["height"], (box, view)  # the whole code on the first screen
    side = min(view["width"], view["height"])
    # a loopback link (these tests' server) puts a warning above the code, which then takes 42 % of the
    # height, not 55 %, so the warning, the code and the link fit one 720 px screen
    warning = page.locator(f"{DIALOG} [data-testid='stAlert']")
    local = urlsplit(link).hostname in ("127.0.0.1", "localhost", "::1")
    assert warning.count() == (1 if local else 0), link
    if local:
        assert warning.bounding_box()["y"] + warning.bounding_box()["height"] <= box["y"] + 1, "warning above the code"
    assert box["width"] >= (0.4 if local else 0.5) * side and abs(box["width"] - box["height"]) <= 1, (box, view)
    text = page.locator(f"{DIALOG} .share-qr-link")
    tbox = text.bounding_box()
    assert tbox["y"] + min(tbox["height"], 40) <= view["height"]  # its first line visible too
    size = float(text.evaluate("e => getComputedStyle(e).fontSize").rstrip("px"))
    # large type: readable from the back of the room (the panel's is 11 px); on a phone a host and port fit a line
    assert size >= min(22, 0.05 * view["width"]), size
    head = f"{urlsplit(link).scheme}://{urlsplit(link).netloc}/"
    assert text.evaluate(LINES_OF_PREFIX, len(head)) == 1, f"{head} wraps in the dialog"
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / shot))
    assert_clean(page)
    page.keyboard.press("Escape")
    page.locator(DIALOG).wait_for(state="detached")
    return link


def test_the_code_is_the_address_bars_link_and_opens_full_screen(server, browser):
    L = catalogs()["en"]
    page = open_app(browser, server, 1280, 720, lang="en", presenter=True)
    try:
        click_nav(page, NAV_INDEX["attention"])
        handle = page.locator('[data-testid="stMain"] [data-testid="stSlider"]').filter(
            has_text=L["attn.layer"]).locator('input[type="range"]').first
        handle.focus()
        handle.press("ArrowRight")
        settle(page)
        page.wait_for_function("() => location.search.includes('layer')")
        open_panel(page, "en")
        link = panel_code(page)
        assert same_link(link, page.url), (link, page.url)
        assert "/attention" in link and "ui.presenter=true" in link
        assert L["share.qr_local"].split("{host}")[0] in page.locator(SIDEBAR).inner_text()  # 127.0.0.1: said
        assert same_link(full_screen(page, "en", "share-qr-full-en.png"), link)

        click_nav(page, NAV_INDEX["generate"])
        next_button = page.get_by_role("button", name=re.compile(re.escape(L["gen.next"])))
        next_button.wait_for(timeout=240_000)
        next_button.click()
        page.wait_for_function("() => location.search.includes('gen.steps=1')", timeout=120_000)
        settle(page)
        open_panel(page, "en")
        link = panel_code(page)
        assert "gen.steps=1" in link and same_link(link, page.url), (link, page.url)
        assert_clean(page)
    finally:
        page.close()


def test_chinese_on_a_phone(server, browser):
    """A student's phone (390 x 844, touch): the sidebar opened by its button, the panel's code, full screen."""
    L = catalogs()["zh"]
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                            locale="zh-CN")
    page.set_default_timeout(120_000)
    try:
        page.goto(server, wait_until="domcontentloaded")
        page.wait_for_selector(CHART, timeout=180_000)
        settle(page)
        if not page.locator(SIDEBAR).is_visible() or page.locator(SIDEBAR).bounding_box()["x"] < 0:
            page.locator('[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapsedControl"] button'
                         ).first.click()
            settle(page)
        open_panel(page, "zh")
        link = panel_code(page)
        assert same_link(link, page.url) and "/overview" in link
        page.locator(f"{SIDEBAR} .share-qr").scroll_into_view_if_needed()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "share-qr-panel-zh-phone.png"))
        assert same_link(full_screen(page, "zh", "share-qr-full-zh-phone.png"), link)
    finally:
        page.close()
