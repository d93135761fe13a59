"""Real-browser flow of "Follow a token" on SmolLM2, at projector size in presenter mode (1280 × 720) and on a phone
(390 × 844), in English and Chinese: open the page by its address, press "Use SmolLM2 with the example", move the token slider,
PageDown through five sub-steps (the phone clicks "Next step", as a thumb does), read the step's sentence, switch to
another token. Screenshots: ``screenshots/follow-<lang>-<presenter|phone>.png``."""

from __future__ import annotations

import pytest

from tests.browser_support import CHART, SHOTS, assert_clean, settle
from ui.strings.follow import EN, ZH

pytestmark = [pytest.mark.browser, pytest.mark.smollm2]

CASES = [("en", "presenter", 1280, 720), ("zh", "presenter", 1280, 720), ("en", "phone", 390, 844),
         ("zh", "phone", 390, 844)]
FIRST_TOKEN, SECOND_TOKEN = "␣Tower", "␣of"
STEP6 = {"en": "Block 1's FFN writes a vector of length", "zh": "第 1 层的前馈网络写出一个长度为"}
STEP_LINE = {"en": "Step 6 of 183", "zh": "第 6 / 183 步"}


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _wait_text(page, text: str, timeout: int = 300_000) -> None:
    page.wait_for_function("t => document.querySelector('[data-testid=\"stMain\"]').innerText.includes(t)", arg=text,
                           timeout=timeout)
    settle(page, timeout=timeout)


def _follow(page, text: str, key: str) -> None:
    """Move the token slider to the token ``text`` with the arrow key ``key`` (ArrowLeft, ArrowRight), as a
    keyboard user does (the slider keeps the focus: the presenter's PageDown below must still move the step)."""
    slider = page.locator('[data-testid="stMain"] [data-testid="stSlider"]').first
    handle = slider.locator('input[type="range"]').first
    for _ in range(40):
        if slider.locator('[data-testid="stSliderThumbValue"]').inner_text().strip() == text:
            return
        handle.focus()
        handle.press(key)
        settle(page, ms=300)
    raise AssertionError(f"the token slider never showed {text!r}")


@pytest.mark.parametrize("lang, mode, width, height", CASES)
def test_follow_a_token(server, browser, lang, mode, width, height):
    s = {"en": EN, "zh": ZH}[lang]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(300_000)  # the first SmolLM2 load on a loaded 2-core machine
    try:
        query = f"ui.lang={lang}" + ("&ui.presenter=true" if mode == "presenter" else "")
        page.goto(f"{server}/follow?{query}", wait_until="domcontentloaded")
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
        settle(page)
        page.get_by_role("button", name=s["follow.use_smollm2"]).click()
        _wait_text(page, "Paris")  # SmolLM2 on the example: the lens names the answer
        assert_clean(page)
        _follow(page, FIRST_TOKEN, "ArrowLeft")  # the slider starts on the last token
        _wait_text(page, "Tower")
        for _ in range(5):
            if mode == "presenter":
                page.keyboard.press("PageDown")
            else:
                page.get_by_role("button", name=s["follow.next"]).click()
            settle(page, ms=300)
        _wait_text(page, STEP_LINE[lang])
        assert STEP6[lang] in _main_text(page)  # the step's sentence, computed from its row
        page.screenshot(path=str(SHOTS / f"follow-{lang}-{mode}.png"), full_page=mode == "phone")
        _follow(page, SECOND_TOKEN, "ArrowRight")  # another token: the same step, its own numbers
        settle(page)
        _wait_text(page, STEP_LINE[lang])
        assert STEP6[lang] in _main_text(page)
        assert_clean(page)
    finally:
        context.close()
