"""Real-browser flows across pages: what a student does in the first minutes, in a fresh browser context.

* Clicking the navigation links (never ``page.goto`` per page) keeps every sidebar value: sliders, radios,
  selects, toggles, the seed and the text, in English and in Chinese, with the defaults, after changing values,
  and after opening a share link.
* The language switch relabels the whole sidebar in the same rerun (the Model radio keeps its selection).
* A share link made by the "Copy link" button in random-id mode reopens the same sidebar in a new context.
* ``/overview`` and the other page paths open without a "Page not found" dialog.

Server and browser fixtures come from ``test_browser.py``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from test_browser import ARGS, CHART, CHROMIUM, SHOTS, browser, server  # noqa: F401  (fixtures)
from ui.i18n import catalogs

pytestmark = pytest.mark.browser

NAV = '[data-testid="stSidebarNav"] a'
SIDEBAR = '[data-testid="stSidebar"]'
LOCALES = {"en": "en-US", "zh": "zh-CN"}

# Every sidebar widget as [kind, label, value]: slider thumbs, the checked radio option, the selected option of
# a select box or segmented control, the text of inputs, the state of toggles.
SNAPSHOT = """() => {
  const sb = document.querySelector('[data-testid="stSidebarUserContent"]');
  const out = [];
  const label = e => (e.querySelector('[data-testid="stWidgetLabel"]')?.innerText || '').trim();
  sb.querySelectorAll('[data-testid="stSlider"]').forEach(e => out.push(['slider', label(e),
    [...e.querySelectorAll('[data-testid="stSliderThumbValue"]')].map(x => x.innerText).join(',')]));
  sb.querySelectorAll('[data-testid="stRadio"]').forEach(e => {
    const c = e.querySelector('input:checked');
    out.push(['radio', label(e), c ? c.closest('label').innerText.trim() : null]);
  });
  sb.querySelectorAll('[data-testid="stSelectbox"]').forEach(e => out.push(['select', label(e),
    e.querySelector('input[role="combobox"]').value]));
  sb.querySelectorAll('[data-testid="stTextArea"]').forEach(e => out.push(['text', label(e), e.querySelector('textarea').value]));
  sb.querySelectorAll('[data-testid="stNumberInput"]').forEach(e => out.push(['number', label(e), e.querySelector('input').value]));
  sb.querySelectorAll('[data-testid="stCheckbox"]').forEach(e => out.push(['toggle', e.innerText.trim(), e.querySelector('input').checked]));
  sb.querySelectorAll('[data-testid="stButtonGroup"]').forEach(e => out.push(['segmented', label(e),
    [...e.querySelectorAll('button[aria-checked="true"]')].map(b => b.innerText.trim()).join(',')]));
  return out;
}"""


def settle(page, quiet_ms: int = 900) -> None:
    """Wait until the app has finished its reruns: no running indicator and the sidebar unchanged for a while."""
    page.wait_for_timeout(300)
    last = None
    for _ in range(200):
        page.wait_for_function(
            """() => !document.querySelector('[data-testid="stStatusWidget"]')
                   && document.querySelector('[data-testid="stSidebarUserContent"]')""", timeout=120_000)
        now = page.evaluate(SNAPSHOT)
        if now == last:
            return
        last = now
        page.wait_for_timeout(quiet_ms)
    raise AssertionError("the sidebar never settled")


def fresh(browser, lang: str = "en"):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1440, "height": 1400}, locale=LOCALES[lang])
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    return ctx


def open_app(ctx, url: str):
    page = ctx.new_page()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(CHART, timeout=120_000)
    settle(page)
    return page


def snapshot(page) -> list:
    return page.evaluate(SNAPSHOT)


def assert_clean(page) -> None:
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()


def click_through_pages(page, before: list) -> None:
    """Click every navigation link once (ending back on the first) and compare the sidebar after each click."""
    n = page.locator(NAV).count()
    assert n >= 7
    for i in list(range(1, n)) + [0]:
        link = page.locator(NAV).nth(i)
        name = link.inner_text().split("\n")[-1]
        link.click()
        settle(page)
        assert_clean(page)
        after = snapshot(page)
        assert after == before, f"sidebar changed after clicking {name!r}:\n" + "\n".join(
            f"  {b} -> {a}" for b, a in zip(before, after) if a != b)


def slider(page, label: str):
    """The keyboard handle of the sidebar slider whose label is ``label``."""
    box = page.locator(f'{SIDEBAR} [data-testid="stSlider"]').filter(has_text=label)
    return box.locator('input[type="range"]').first


def press(page, label: str, key: str, times: int = 1) -> None:
    handle = slider(page, label)
    handle.focus()
    for _ in range(times):
        handle.press(key)
    settle(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_navigation_keeps_the_sidebar(server, browser, lang):  # noqa: F811
    """The first click on another page used to reset every slider to its minimum and empty the text."""
    ctx = fresh(browser, lang)
    try:
        page = open_app(ctx, server + "/")
        before = snapshot(page)
        assert any(kind == "text" and value for kind, _, value in before), before  # the default text is there
        click_through_pages(page, before)
        # change values the way a student does, then click through again
        L = catalogs()[lang]
        press(page, L["cfg.num_hidden_layers.label"], "ArrowRight")  # layers 2 -> 3
        press(page, L["cfg.num_key_value_heads.label"], "Home")  # KV heads -> 1 (the widget's minimum)
        press(page, L["cfg.vocab_size.label"], "Home")  # V -> 16 (the widget's minimum)
        changed = snapshot(page)
        assert changed != before
        click_through_pages(page, changed)
        SHOTS.mkdir(exist_ok=True)
        page.locator(SIDEBAR).screenshot(path=str(SHOTS / f"sidebar-{lang}.png"))
    finally:
        ctx.close()


def test_navigation_keeps_the_sidebar_after_opening_a_share_link(server, browser):  # noqa: F811
    params = {"ui.lang": "中文", "cfg.vocab_size": "512", "cfg.hidden_size": "32", "cfg.num_hidden_layers": "1",
              "cfg.num_attention_heads": "8", "cfg.num_key_value_heads": "2", "cfg.norm_type": "RMSNorm",
              "cfg.ffn": "SwiGLU", "cfg.tie_word_embeddings": "false", "cfg.seed": "7",
              "input.text": "白日依山尽，黄河入海流。"}
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, server + "/attention?" + urlencode(params))
        before = snapshot(page)
        values = {label: value for _, label, value in before}
        zh = catalogs()["zh"]
        assert values[zh["cfg.num_hidden_layers.label"]] == "1" and values[zh["cfg.vocab_size.label"]] == "512"
        assert values[zh["input.text.label"]] == params["input.text"]
        click_through_pages(page, before)
    finally:
        ctx.close()


@pytest.mark.parametrize("start, switch_to", [("en", "zh"), ("zh", "en")])
def test_language_switch_relabels_the_whole_sidebar_in_one_rerun(server, browser, start, switch_to):  # noqa: F811
    ctx = fresh(browser, start)
    try:
        page = open_app(ctx, server + "/")
        before = snapshot(page)
        page.locator(f'{SIDEBAR} [data-testid="stButtonGroup"] button',
                     has_text={"zh": "中文", "en": "English"}[switch_to]).click()
        settle(page)
        after = snapshot(page)
        new, old = catalogs()[switch_to], catalogs()[start]
        labels = [label for _, label, _ in after]
        for key in ("cfg.preset.label", "model.source.label", "cfg.vocab_size.label", "cfg.num_hidden_layers.label",
                    "cfg.norm_type.label", "cfg.ffn.label", "cfg.seed.label", "input.mode.label", "input.text.label",
                    "cfg.tie_word_embeddings.label", "ui.presenter"):
            assert new[key] in labels, (key, labels)
            assert old[key] not in labels or old[key] == new[key], (key, labels)
        model = next(value for kind, label, value in after if kind == "radio" and label == new["model.source.label"])
        assert model == new["model.source.random"]  # the Model radio keeps its selection
        preset = next(value for kind, label, value in after if kind == "select" and label == new["cfg.preset.label"])
        assert preset == new["cfg.preset.none"]
        # the values themselves did not change
        assert [(k, v) for k, _, v in after if k not in ("segmented", "radio", "select")] == \
               [(k, v) for k, _, v in before if k not in ("segmented", "radio", "select")]
    finally:
        ctx.close()


def copy_link(page) -> str:
    """Click "Copy link" (inside its iframe) and return what it copied."""
    page.locator(SIDEBAR).get_by_text({"en": "Share & export", "zh": "分享与导出"}["en"]).click()
    frame = page.frame_locator(f'{SIDEBAR} iframe').first
    frame.locator("#b").click()
    page.wait_for_timeout(300)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url
    return copied


def click_radio(page, option: str) -> None:
    page.locator(f'{SIDEBAR} [data-testid="stRadio"] label', has_text=option).first.click()
    settle(page)


def test_random_input_round_trips(server, browser):  # noqa: F811
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, server + "/?ui.lang=English")
        click_radio(page, "随机 id / random ids")
        press(page, "Sequence length T", "Home")  # T = 1, the minimum
        before = snapshot(page)
        link = copy_link(page)
        click_through_pages(page, before)
    finally:
        ctx.close()
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, link)
        assert snapshot(page) == before
    finally:
        ctx.close()


def test_every_page_path_opens_without_page_not_found(server, browser):  # noqa: F811
    ctx = fresh(browser, "en")
    try:
        for path in ["overview", "norms", "attention"]:
            page = open_app(ctx, f"{server}/{path}?ui.lang=English")
            page.wait_for_timeout(1000)
            assert page.get_by_text("Page not found").count() == 0, path
            assert_clean(page)
            page.close()
    finally:
        ctx.close()


def test_presenter_mode_from_a_link_survives_navigation(server, browser):  # noqa: F811
    """A lecturer's link with presenter mode on: the mode stays on after clicking to another page."""
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, server + "/?ui.lang=English&ui.presenter=true")
        toggle = page.locator(f'{SIDEBAR} [data-testid="stCheckbox"]', has_text="Presenter mode").locator("input")
        assert toggle.is_checked()
        before = snapshot(page)
        click_through_pages(page, before)
        assert toggle.is_checked()
    finally:
        ctx.close()
