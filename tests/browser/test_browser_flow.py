"""Real-browser flows across pages: what a student does in the first minutes, in a fresh browser context.

* Clicking the navigation links (never ``page.goto`` per page) keeps every sidebar value: sliders, radios,
  selects, toggles, the seed and the text, in English and in Chinese, with the defaults, after changing values,
  and after opening a share link.
* The language switch relabels the whole sidebar in the same rerun (the Model radio keeps its selection).
* A share link made by the "Copy link" button reopens exactly the same sidebar in a new browser context, for every
  URL-bound sidebar control at its minimum, a middle value and its maximum (values equal to a widget's own
  minimum used to be dropped from links), and in random-id mode.
* ``/overview`` and the other page paths open without a "Page not found" dialog.

Server and browser fixtures come from ``test_browser.py``.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from settings.schema import init_label
from ui.sidebar import fixed_label

import pytest

from tests.browser_support import CHART, SHOTS
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
        if now and now == last:  # an empty sidebar is a run still drawing (its widgets are skeletons)
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
    page.set_default_timeout(120_000)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(CHART, timeout=240_000)  # a first page load took over 120 s on the loaded 2-core machine
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


def test_text_typed_on_another_page_after_clearing_survives_the_way_back(server, browser):  # noqa: F811
    """A fresh user cleared the sidebar text on the Overview, typed new text on Attention and clicked back: the
    Overview showed the empty text again (Streamlit keeps each page's own widget value)."""
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, server + "/")
        empty = catalogs()["en"]["input.empty"]
        box = page.locator(f'{SIDEBAR} [data-testid="stTextArea"] textarea').first
        box.fill("")
        box.press("Control+Enter")  # what Streamlit's text area says to press to apply
        settle(page)
        assert empty in page.locator('[data-testid="stMain"]').inner_text()
        page.locator(NAV).filter(has_text=catalogs()["en"]["nav.attention"]).first.click()
        settle(page)
        box.fill("moon light")
        box.press("Control+Enter")
        settle(page)
        page.locator(NAV).first.click()  # back to the Overview
        settle(page)
        assert_clean(page)
        assert box.input_value() == "moon light"
        assert empty not in page.locator('[data-testid="stMain"]').inner_text()
    finally:
        ctx.close()


def test_navigation_keeps_the_sidebar_after_opening_a_share_link(server, browser):  # noqa: F811
    params = {"ui.lang": "中文", "cfg.vocab_size": "512", "cfg.hidden_size": "32", "cfg.num_hidden_layers": "1",
              "cfg.num_attention_heads": "8", "cfg.num_key_value_heads": "2", "cfg.norm_type": "RMSNorm",
              "cfg.ffn": "SwiGLU", "cfg.tie_word_embeddings": "false", "cfg.seed": "7",
              "cfg.position_embedding": "rope", "input.text": "白日依山尽，黄河入海流。"}
    ctx = fresh(browser, "en")
    try:
        page = open_app(ctx, server + "/attention?" + urlencode(params))
        before = snapshot(page)
        values = {label: value for _, label, value in before}
        zh = catalogs()["zh"]
        assert values[zh["cfg.num_hidden_layers.label"]] == "1" and values[zh["cfg.vocab_size.label"]] == "512"
        assert values[zh["input.text.label"]] == params["input.text"]
        assert values[zh["cfg.position_embedding.label"]] == zh["cfg.position_embedding.rope"]
        click_through_pages(page, before)
        # the link is still complete after the clicks, every choice by its id (the link's labels RMSNorm, SwiGLU
        # and 中文 were read as aliases of rmsnorm, swiglu and zh)
        query = urlsplit(page.url).query
        ids = {**params, "ui.lang": "zh", "cfg.norm_type": "rmsnorm", "cfg.ffn": "swiglu"}
        assert all(urlencode({k: v}) in query for k, v in ids.items()), query
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


def copy_link(page, lang: str = "en") -> str:
    """Click "Copy link" (inside its iframe) and return what it copied."""
    page.locator(SIDEBAR).get_by_text(catalogs()[lang]["share.title"]).click()
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
        click_radio(page, catalogs()["en"]["input.mode.random"])
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


# Every URL-bound sidebar control at its minimum, a middle value and its maximum, as {key: value id}. Option lists
# are the sidebar's (ui/sidebar.py); heads and KV heads are the extremes of the options the hidden size allows.
# Controls that only exist in one input mode (text, sequence length) are covered in the batch using that mode.
EXTREMES = {
    "min": {"ui.lang": "zh", "ui.presenter": False, "cfg.vocab_size": 16, "cfg.hidden_size": 4,
            "cfg.num_hidden_layers": 1, "cfg.position_embedding": "learned", "cfg.num_attention_heads": 1,
            "cfg.num_key_value_heads": 1, "cfg.intermediate_size": 8, "cfg.norm_type": "layernorm",
            "cfg.norm_position": "pre", "cfg.ffn": "relu", "cfg.tie_word_embeddings": False,
            "cfg.initializer_range": 0.002, "cfg.seed": 0, "input.mode": "random", "input.random_len": 1},
    "middle": {"ui.lang": "en", "ui.presenter": False, "cfg.vocab_size": 512, "cfg.hidden_size": 96,
               "cfg.num_hidden_layers": 24, "cfg.position_embedding": "rope", "cfg.num_attention_heads": 6,
               "cfg.num_key_value_heads": 3, "cfg.intermediate_size": 344, "cfg.norm_type": "rmsnorm",
               "cfg.norm_position": "post", "cfg.ffn": "gelu_new", "cfg.tie_word_embeddings": False,
               "cfg.initializer_range": 0.5, "cfg.seed": 12345, "input.mode": "text",
               "input.text": "a&b=c #1 + 50% ?x 白日依山尽 😀\n第二行"},
    "max": {"ui.lang": "en", "ui.presenter": True, "cfg.vocab_size": 50257, "cfg.hidden_size": 768,
            "cfg.num_hidden_layers": 48, "cfg.position_embedding": "none", "cfg.num_attention_heads": 64,
            "cfg.num_key_value_heads": 64, "cfg.intermediate_size": 3072, "cfg.norm_type": "rmsnorm",
            "cfg.norm_position": "post", "cfg.ffn": "swiglu", "cfg.tie_word_embeddings": True,
            "cfg.initializer_range": 1e20, "cfg.seed": 2**31 - 1, "input.mode": "random", "input.random_len": 64},
}
CHOICES = ("ui.lang", "cfg.position_embedding", "cfg.norm_type", "cfg.norm_position", "cfg.ffn", "input.mode")
TRANSLATED = ("cfg.position_embedding", "input.mode")  # shown in the interface language, linked by their id


def link_value(key: str, value) -> str:
    """How the URL writes a value: the option's id for every choice (issue 22), lower-case booleans, numbers as
    Python writes them."""
    if key in CHOICES:
        return value
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def shown(key: str, value, lang: str):
    """What the sidebar shows for a value: (widget kind, label, displayed value) as SNAPSHOT reads it."""
    L = catalogs()[lang]
    if key == "ui.lang":
        return "segmented", "Language / 语言", fixed_label(value)
    if key == "ui.presenter":
        return "toggle", L["ui.presenter"], value
    if key == "cfg.tie_word_embeddings":
        return "toggle", L[f"{key}.label"], value
    if key == "cfg.seed":
        return "number", L[f"{key}.label"], str(value)
    if key == "input.text":
        return "text", L[f"{key}.label"], value
    label = L[f"{key}.{value}"] if key in TRANSLATED else fixed_label(value)
    if key in ("cfg.position_embedding", "cfg.ffn"):
        return "select", L[f"{key}.label"], label
    if key in CHOICES:
        return "radio", L[f"{key}.label"], label
    if key == "cfg.initializer_range":  # the slider's own notation: 0.002, 0.5, 10²⁰ (never Python's 1e+20)
        return "slider", L[f"{key}.label"], init_label(value)
    return "slider", L[f"{key}.label"], str(value)


def open_link(ctx, url: str, chart: bool = True):
    """Open ``url`` in a new page of ``ctx``; wait for the first chart (or only for the sidebar)."""
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(CHART if chart else '[data-testid="stSidebarUserContent"] [data-testid="stSlider"]',
                           state="attached", timeout=180_000)  # presenter mode folds the sliders away
    settle(page)
    return page


def unfold_model_settings(page, lang: str) -> None:
    """Open the model-settings expander (presenter mode folds it; folded widgets have no visible text)."""
    summary = page.locator(f'{SIDEBAR} [data-testid="stExpander"] summary', has_text=catalogs()[lang]["cfg.section"])
    if summary.locator("xpath=..").get_attribute("open") is None:
        summary.click()
        page.wait_for_timeout(500)


@pytest.mark.parametrize("extreme", list(EXTREMES))
def test_share_link_keeps_every_control_at_its_minimum_middle_and_maximum(server, browser, extreme):  # noqa: F811
    """Open a link that sets every bound control, read the widgets back, click "Copy link", open the copied link in
    a NEW browser context: the sidebar shows exactly the same values.

    Values are set through a link rather than by hand (one page load per batch instead of ~20 clicks, each a
    rerun on a loaded machine); the link that is checked is the one the "Copy link" button produces. On the old
    mechanism the minimum batch fails (V 16, L 1, KV heads 1, ReLU, untied were dropped from the URL, so they
    came back as the app's defaults).

    The maximum batch is over the server's cost budget (server/budget.py): by design the page then shows the budget
    message instead of a chart. The test asserts that, and that the link still restores every widget exactly
    (the whole sidebar, input and share controls included, is drawn before the refusal).
    """
    values = EXTREMES[extreme]
    lang = values["ui.lang"]
    refused = extreme == "max"
    url = server + "/?" + urlencode({k: link_value(k, v) for k, v in values.items()})
    opened = open_in_new_context(browser, url, lang, refused)
    for key, value in values.items():  # the link was read as written
        kind, label, expected = shown(key, value, lang)
        assert [kind, label, expected] in opened["sidebar"], (key, [r for r in opened["sidebar"] if r[1] == label])
    reopened = open_in_new_context(browser, opened["link"], lang, refused)
    before, after = opened["sidebar"], reopened["sidebar"]
    assert after == before, "\n".join(f"  {b} -> {a}" for b, a in zip(before, after) if a != b)
    if refused:
        start = catalogs()[lang]["budget.refused"].split("{")[0]
        assert start in reopened["error"] and reopened["charts"] == 0
    else:
        assert reopened["charts"] >= 1


def open_in_new_context(browser, url: str, lang: str, refused: bool) -> dict:  # noqa: F811
    """Open ``url`` in a fresh browser context; return its sidebar snapshot, the link "Copy link" gives, the
    number of charts and the text of the first error on the page."""
    ctx = fresh(browser, "en")
    try:
        page = open_link(ctx, url, chart=not refused)
        assert_clean(page)
        unfold_model_settings(page, lang)
        main = page.locator('[data-testid="stMain"]')
        errors = main.locator('[data-testid="stAlertContentError"]')
        return {"sidebar": snapshot(page), "link": copy_link(page, lang), "charts": main.locator(CHART).count(),
                "error": errors.first.inner_text() if errors.count() else ""}
    finally:
        ctx.close()


def test_invalid_link_values_are_named_once_and_leave_the_address_bar(server, browser):  # noqa: F811
    """The browser side of tests/pages/test_link_values.py: the address bar itself loses the bad values (a previous
    mechanism left ``cfg.num_hidden_layers=3`` and ``cfg.seed=3.5`` there), each is named once, the good one stays."""
    bad = {"cfg.num_hidden_layers": "3.5", "cfg.seed": "3.5", "cfg.ffn": "Bogus", "cfg.vocab_size": "nan"}
    ctx = fresh(browser, "en")
    try:
        page = open_link(ctx, server + "/norms?" + urlencode({"ui.lang": "English", "cfg.hidden_size": "32", **bad}))
        assert_clean(page)
        text = " ".join(page.locator(f'{SIDEBAR} [data-testid="stAlertContentWarning"]').all_inner_texts())
        query = urlsplit(page.url).query
        for key in bad:
            assert text.count(f"({key})") == 1, (key, text[:500])
            assert key + "=" not in query, query
        assert "cfg.hidden_size=32" in query
        values = {label: value for _, label, value in snapshot(page)}
        assert (values["Layers L"], values["Init seed"], values["FFN activation"]) == ("2", "0", "GELU")
    finally:
        ctx.close()
