"""Screenshots of class mode for a person to look at: a lecturer (1280 × 720, presenter mode) and students on
phones (390 × 844), in English and in Chinese, taken the way people get there (a fresh browser context each, the
sidebar's "Start a class", the join link, the answer buttons, Reveal).

Usage: ``python -m tools.class_screenshots [--out /tmp/class-shots] [--langs en zh] [--no-docs]``

Per language: the lecturer's screen with the question open and the count live (and with the answers' chart
switched off), the full-screen code, a phone with the question, the lecturer and a phone after the reveal. Unless
``--no-docs``, also writes the README's two pictures: ``docs/class-lecturer.png`` (English, the question open,
the answers in) and ``docs/class-phone.png`` (Chinese, a phone with the question). The server runs with a
temporary class store.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from pathlib import Path

from tests.browser_support import ARGS, CHROMIUM, settle, start_server

ROOT = Path(__file__).resolve().parents[1]
LESSON = "/attention?lesson=numpy_decoder&step=1"
PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2)
SECTION = {"en": "Class mode", "zh": "课堂模式"}


def _new(browser, **kwargs):
    page = browser.new_context(**kwargs).new_page()
    page.set_default_timeout(120_000)
    return page


def run(browser, url: str, lang: str, out: Path, picks: list[int]) -> dict[str, Path]:
    shots: dict[str, Path] = {}

    def shot(page, name: str, full: bool = False) -> None:
        settle(page, 1200)
        path = out / f"class-{lang}-{name}.png"
        page.screenshot(path=str(path), full_page=full)
        shots[name] = path

    lecturer = _new(browser, viewport={"width": 1280, "height": 720})
    lecturer.goto(f"{url}{LESSON}&ui.lang={lang}&ui.presenter=true")
    lecturer.wait_for_selector('[data-testid="stSidebar"]')
    settle(lecturer)
    lecturer.locator('[data-testid="stSidebar"]').get_by_text(SECTION[lang]).click()
    lecturer.locator(".st-key-class-start button").first.click()
    lecturer.wait_for_selector(".st-key-class-count")
    code = re.search(r"([A-HJ-NP-Z2-9]{6})", lecturer.locator(".st-key-class-count").inner_text()).group(1)
    students = []
    for i, pick in enumerate(picks):
        page = _new(browser, **PHONE)
        page.goto(f"{url}/?class={code}&ui.lang={lang}")
        page.wait_for_selector(f".st-key-class-answer-{pick}")
        settle(page)
        if i == 0:
            shot(page, "phone-question")
        page.locator(f".st-key-class-answer-{pick} button").click()
        page.wait_for_selector(f'.st-key-class-answer-{pick} button[kind="primary"]')
        students.append(page)
    lecturer.wait_for_function("n => document.querySelector('.st-key-class-count').innerText.includes(String(n))",
                               arg=len(picks), timeout=60_000)
    shot(lecturer, "lecturer-question")
    toggle = lecturer.locator(".st-key-class-show_answers label")  # the answers kept off the projector, then back
    toggle.click()
    lecturer.wait_for_selector(".st-key-class-distribution", state="detached")
    shot(lecturer, "lecturer-answers-hidden")
    toggle.click()
    lecturer.wait_for_selector(".st-key-class-distribution")
    lecturer.locator(".st-key-class-qr button").click()
    lecturer.wait_for_selector('[role="dialog"] img')
    shot(lecturer, "lecturer-fullscreen-code")
    lecturer.keyboard.press("Escape")
    settle(lecturer)
    lecturer.locator(".st-key-class-reveal button").click()
    for page in students:
        page.wait_for_selector(".st-key-class-distribution", timeout=60_000)
    lecturer.wait_for_selector(".st-key-attn-heatmap-chart", timeout=60_000)
    shot(lecturer, "lecturer-revealed")
    shot(students[0], "phone-revealed")
    shot(students[0], "phone-revealed-full", full=True)
    for page in [lecturer, *students]:
        page.context.close()
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/class-shots"))
    parser.add_argument("--langs", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["EXPLORER_DATA_DIR"] = tempfile.mkdtemp(prefix="class-shots-")
    from playwright.sync_api import sync_playwright

    proc, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for lang in args.langs:
                shots = run(browser, url, lang, args.out, picks=[1, 0, 1, 2, 1])
                for path in shots.values():
                    print(path)
                if not args.no_docs and lang == "en":
                    (ROOT / "docs" / "class-lecturer.png").write_bytes(shots["lecturer-question"].read_bytes())
                if not args.no_docs and lang == "zh":
                    (ROOT / "docs" / "class-phone.png").write_bytes(shots["phone-question"].read_bytes())
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
