"""The Tang-poem model shipped in the repository, chosen the way a lecturer would: a fresh context switched to 中文
(presenter mode, 1280x720), "pretrained checkpoint" clicked in the sidebar, 唐诗小模型 picked in the checkpoint
list, then Attention, Head roles and Logit lens opened from the navigation: no exception, their charts drawn,
the caption of what the model learned shown with the numbers of its metrics.json."""

from __future__ import annotations

import pytest

from engine.checkpoints import poem
from tests.browser_support import CHART, NAV_INDEX, SHOTS, assert_clean, checkpoint_shown, click_nav, open_app, settle
from ui.strings import common as common_strings
from ui.strings import poem as poem_strings

pytestmark = [pytest.mark.browser]

PAGE_INDEX = {p: NAV_INDEX[p] for p in ("attention", "heads", "lens")}


def choose_poem_model(page, timeout: int = 300_000) -> None:
    """Click "pretrained checkpoint", then pick 唐诗小模型 in the checkpoint list (SmolLM2, when installed, is first)."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text(common_strings.ZH["model.source.checkpoint"], exact=True).click()
    select = sidebar.locator('[data-testid="stSelectbox"]').filter(has_text=common_strings.ZH["model.checkpoint.label"])
    select.wait_for(timeout=timeout)
    settle(page, timeout=timeout)
    title = poem_strings.ZH["poem.title"].split("（")[0]  # 唐诗小模型
    if title not in checkpoint_shown(page, "zh"):
        box = select.locator('input[role="combobox"]')
        box.click()
        box.press_sequentially(title)  # the list filters to the typed name, as a person would narrow it
        page.get_by_role("option").filter(has_text=title).first.click()
    page.wait_for_function("""t => [...document.querySelectorAll('[data-testid="stSidebar"] input[role="combobox"]')]
                                   .some(i => i.value.includes(t))""", arg=title, timeout=timeout)
    settle(page, timeout=timeout)


def test_poem_model_in_chinese(server, browser):
    metrics = poem.read_metrics()
    page = open_app(browser, server, 1280, 720, lang="zh", presenter=True, timeout=300_000)
    try:
        choose_poem_model(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        caption = sidebar.locator('[data-testid="stCaptionContainer"]').filter(has_text="学到了什么")
        assert caption.count() == 1
        text = caption.inner_text()
        assert f"{metrics['heldout_loss']:.2f}" in text and f"{metrics['comma_prob']:.2f}" in text, text
        for name, index in PAGE_INDEX.items():
            assert click_nav(page, index, timeout=300_000) == name
            page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
            settle(page)
            assert_clean(page)
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / f"poem-1280x720-presenter-zh-{name}.png"))
        assert "唐诗小模型" in checkpoint_shown(page, "zh")  # still chosen after the navigation clicks
    finally:
        page.close()
