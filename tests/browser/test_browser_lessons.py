"""Lessons in a real browser (issue 23), 1280 x 720 in presenter mode, as a lecturer with a clicker drives one.

A fresh context opens the app, turns presenter mode on, clicks "Lessons" in the navigation and starts lesson 1;
it answers every question by clicking (the odd questions right, the even ones wrong; the numeric estimate
typed), moves on with PageDown across the Overview, Pre vs Post, Layer norms and Loss pages, switches the
language to Chinese midway, and reaches the summary with the expected score and the missed steps linked back.
The chart a question is about is absent before the answer and drawn after it. Another context opens
``?lesson=…&step=…`` directly, and the browser's back button goes back a step. The expected keys are computed
here from the lesson file and the same model (``lessons.compute_key``), independently of the running app.
"""

from __future__ import annotations

import re

import pytest

from teaching import lessons
from tests.browser_support import NAV_LINKS, assert_clean, open_app, settle, wait_text
from ui.i18n import catalogs

pytestmark = [pytest.mark.browser]

LESSON = "minimind_block"
BANNER = ".st-key-lessons-banner"


def css(key: str) -> str:
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


@pytest.fixture(scope="module")
def keys():
    lesson = lessons.by_id(LESSON)
    return lesson, {s.number: lessons.compute_key(lesson, s, lessons.inputs_for(s)) for s in lesson.steps if s.question}


def banner_step(page) -> int:
    text = page.locator(BANNER).inner_text()
    m = re.search(r"step (\d+) of|第 (\d+) / ", text, re.IGNORECASE)
    assert m, text[:200]
    return int(m.group(1) or m.group(2))


def wait_step(page, n: int) -> None:
    page.wait_for_function("n => new URLSearchParams(location.search).get('step') === String(n)", arg=n,
                           timeout=120_000)
    page.wait_for_selector(BANNER, timeout=120_000)
    page.wait_for_function("n => /step \\d+ of|第 \\d+ \\/ /i.test((document.querySelector('.st-key-lessons-banner')?.innerText || ''))",
                           arg=n, timeout=60_000)  # the progress bar's label is drawn with the bar
    settle(page)
    assert banner_step(page) == n


def test_a_lecture_with_a_clicker(server, browser, keys):
    lesson, answer = keys
    page = open_app(browser, server, width=1280, height=720, presenter=True)
    page.locator(NAV_LINKS).filter(has_text="Lessons").click()
    page.wait_for_selector(css(f"lessons.open.{LESSON}"))
    settle(page)
    page.locator(css(f"lessons.open.{LESSON}") + " button").click()
    wait_step(page, 1)
    pages, lang, right, asked = set(), "en", 0, 0
    for step in lesson.steps:
        n = step.number
        if n > 1:
            page.keyboard.press("PageDown")  # a presentation clicker
            wait_step(page, n)
        assert page.url.split("?")[0].endswith("/" + step.page)
        pages.add(step.page)
        assert_clean(page)
        if n == 5:  # midway: the lecturer switches the room to Chinese
            page.locator('[data-testid="stSidebar"] [data-testid="stButtonGroup"] button', has_text="中文").click()
            wait_text(page, BANNER, "第 5 / ")
            settle(page)
            lang = "zh"
        assert step.text[lang].split("`")[0][:12] in page.locator(BANNER).inner_text()
        if step.question is None:
            continue
        key = answer[n]
        chart = css(f"{step.chart[0]}.chart") if step.chart else None
        if chart and not step.chart[0].endswith(("shapes", "keep")):
            # the run that drew the previous step may still be replaced by this step's (a repair's rerun)
            page.wait_for_function("([sel, text]) => !document.querySelector(sel) && "
                                   "document.querySelector('[data-testid=\"stMain\"]').innerText.includes(text)",
                                   arg=[chart, catalogs()[lang]["lessons.predict_first"]], timeout=60_000)
            settle(page)
            assert page.locator(chart).count() == 0, f"step {n}: the chart is drawn before the answer"
        # the question and its options are on the first screen of a 1280 x 720 projector
        first = page.locator(css("lessons.option.0") if key.kind == "choice" else css("lessons.estimate"))
        assert first.bounding_box()["y"] + first.bounding_box()["height"] <= 720
        asked += 1
        good = asked % 2 == 1
        if key.kind == "choice":
            pick = key.correct if good else (key.correct + 1) % len(key.options)
            page.locator(css(f"lessons.option.{pick}") + " button").click()
        else:
            box = page.locator(css("lessons.estimate") + " input")
            box.fill(f"{key.correct:.4g}" if good else f"{key.correct * 3:.4g}")
            box.press("Enter")
            settle(page, 400)
            # the rerun of the typed number may still show the last run's (disabled) Check beside the new one
            check = css("lessons.check") + " button"
            page.wait_for_function("sel => { const b = document.querySelectorAll(sel); "
                                   "return b.length === 1 && !b[0].disabled; }", arg=check, timeout=60_000)
            page.locator(check).click()
        right += good
        verdict = catalogs()[lang]["lessons.right" if good else "lessons.wrong"].split("{")[0].split("**")[0]
        wait_text(page, BANNER, verdict.strip())
        settle(page)
        if chart and not step.chart[0].endswith(("shapes", "keep")):
            page.wait_for_selector(chart + " .main-svg", timeout=120_000)  # revealed
        assert_clean(page)
    assert {"overview", "pre-vs-post", "norms", "loss"} <= pages
    page.keyboard.press("PageDown")  # past the last step: the summary
    page.wait_for_function("() => location.pathname.endsWith('/lessons')", timeout=120_000)
    settle(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert catalogs()["zh"]["lessons.score"].format(right=right, total=asked) in main
    assert right == (asked + 1) // 2
    missed = page.locator('[data-testid="stMain"] button').filter(has_text="↩️")
    assert missed.count() == asked - right
    missed.first.click()  # a missed concept links back to its step
    first_wrong = [s.number for s in lesson.steps if s.question][1]
    wait_step(page, first_wrong)
    page.close()


def test_a_link_opens_a_step_and_back_goes_back(server, browser, keys):
    lesson, answer = keys
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(120_000)
    page.goto(f"{server}/pre-vs-post?lesson={LESSON}&step=4&ui.lang=en", wait_until="domcontentloaded")  # a copied link
    wait_step(page, 4)
    # the first request of a fresh server: no "Page not found" dialog (a pages/ folder made Streamlit look for a
    # file named pre-vs-post; the page scripts now live in app_pages/)
    assert page.locator('[role="dialog"]').count() == 0
    assert page.url.split("?")[0].endswith("/pre-vs-post")
    assert page.locator(css("prepost.norms.chart")).count() == 0  # the question is open: no chart yet
    assert "Predict first" in page.locator('[data-testid="stMain"]').inner_text()
    page.locator(css("lessons.skip") + " button").click()  # skip reveals
    page.wait_for_selector(css("prepost.norms.chart") + " .main-svg")
    page.keyboard.press("PageDown")
    wait_step(page, 5)
    assert page.url.split("?")[0].endswith("/norms")
    page.go_back()  # the browser's back button: step 4 again, on its page
    wait_step(page, 4)
    assert page.url.split("?")[0].endswith("/pre-vs-post")
    assert page.locator(css("prepost.norms.chart") + " .main-svg").count() >= 1  # skipped: still revealed
    page.reload()  # the same browser session: the progress survives
    wait_step(page, 4)
    page.wait_for_selector(css("prepost.norms.chart") + " .main-svg")
    assert_clean(page)
    page.close()
