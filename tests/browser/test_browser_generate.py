"""Real-browser flow of the decode stepper: open the app, click through the navigation to "Generate", press
"Next token" and PageDown, switch to Chinese and to presenter mode at projector size. Screenshots go to
``screenshots/`` (generate-en.png, generate-zh.png, generate-presenter.png) for a person to look at."""

from __future__ import annotations

import re

import pytest

from tests.browser_support import SHOTS

pytestmark = pytest.mark.browser

PROMPT = "床前明月光，疑是地上霜。"
STATUS = re.compile(r"decode steps: (\d+)")


def _steps(page) -> int:
    text = page.locator('[data-testid="stMain"]').inner_text()
    m = STATUS.search(text) or re.search(r"解码步数：(\d+)", text)
    return int(m.group(1))


def _wait_steps(page, n: int) -> None:
    page.wait_for_function(
        "n => /(decode steps|解码步数)[:：] ?(\\d+)/.exec(document.querySelector('[data-testid=\"stMain\"]').innerText)?.[2] == String(n)",
        arg=n, timeout=180_000)
    page.wait_for_timeout(600)


def _clean(page) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()


def test_click_to_generate_press_next_and_pagedown(server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 2600})
    page = context.new_page()
    page.set_default_timeout(180_000)  # a loaded 2-core machine can take minutes for the first run
    try:
        page.goto(f"{server}/?ui.lang=English", wait_until="domcontentloaded")  # the only goto: then clicks
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=240_000)
        page.locator('[data-testid="stSidebarNav"] a', has_text="Generate (KV cache)").click()
        page.wait_for_url(re.compile(r"/generate"), timeout=180_000)
        page.wait_for_timeout(1500)
        # type the prompt into the sidebar, as a lecturer would (Ctrl+Enter commits a text area)
        box = page.locator('[data-testid="stSidebar"] textarea').first
        box.fill(PROMPT)
        box.press("Control+Enter")
        page.wait_for_selector("text=Watch it generate", timeout=180_000)
        page.get_by_role("button", name=re.compile("Next token")).wait_for(timeout=180_000)
        page.wait_for_timeout(800)
        assert _steps(page) == 0
        page.get_by_text(re.compile(r"Prompt: \d+ tokens prefilled")).first.wait_for(timeout=180_000)
        # the prefilled count is the sidebar's own token count of the typed prompt (11 pieces: 明月 is one token)
        sidebar_n = re.search(r"(\d+) tokens:", page.locator('[data-testid="stSidebar"]').inner_text()).group(1)
        assert f"Prompt: {sidebar_n} tokens prefilled" in page.locator('[data-testid="stMain"]').inner_text()
        assert page.locator('[data-testid="stSidebar"] textarea').first.input_value() == PROMPT
        page.get_by_role("button", name=re.compile("Next token")).click()
        _wait_steps(page, 1)
        page.locator("body").press("PageDown")  # the button's keyboard shortcut, as a presentation clicker sends
        _wait_steps(page, 2)
        page.get_by_role("button", name=re.compile("Next token")).click()
        _wait_steps(page, 3)
        _clean(page)
        main = page.locator('[data-testid="stMain"]').inner_text()
        assert "Step 3:" in main and "max |Δ| = " in main
        assert "one row over" in main  # the single query row's title
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "generate-en.png"), full_page=True)

        page.locator('[data-testid="stSidebar"]').get_by_text("中文", exact=True).click()
        page.wait_for_selector("text=看它生成", timeout=180_000)
        page.wait_for_timeout(800)
        _clean(page)
        assert _steps(page) == 3  # the run survives the language switch
        page.screenshot(path=str(SHOTS / "generate-zh.png"), full_page=True)

        page.set_viewport_size({"width": 1280, "height": 720})
        page.locator('[data-testid="stSidebar"]').get_by_text("演示模式").click()
        page.wait_for_timeout(1500)
        page.locator('[data-testid="stMain"] h1').first.click()  # focus back on the page, off the toggle
        page.keyboard.press("PageDown")
        _wait_steps(page, 4)
        _clean(page)
        page.screenshot(path=str(SHOTS / "generate-presenter.png"))
    finally:
        context.close()
