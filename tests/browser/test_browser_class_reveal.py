"""Class mode's reveal holds (issue 32), in real browsers: one lecturer in two tabs (1280 × 720) and two phones
(390 × 844, the light phone page), each in a fresh context, on lesson "A GPT decoder, the NumPy way".

1. the phones answer step 1; the lecturer reveals, opens a quick poll and closes it: the question stays revealed
   on the lecturer's screen (both tabs) and on both phones (their result, the lesson's chart, no answer buttons,
   nothing saying the answer can still change); a changed answer sent after the reveal with a phone's own student
   id is refused by the store and the lecturer's count does not move;
2. Reveal (tab A) and Next (tab B) clicked together, in both orders, from steps 2 and 3: each time the class ends
   on the next step with its question open and the step it left revealed (Back finds it revealed on the lecturer's
   screen and on the phones), never unrevealed;
3. on to step 5 and its reveal: the Layer norms chart (two panels, a legend, a long title) fits both phones: nothing
   past the edges, no title over another (issue 35).

Helpers are test_browser_class.py's. Screenshots of the lecturer and a phone after reveal -> poll -> close go to
``$CLASS_REVEAL_SHOTS`` when it names a folder (English; ``CLASS_REVEAL_LANG=zh`` for Chinese).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from teaching.classroom import AnswerClosed, ClassStore
from tests.browser.test_browser_class import (
    COUNT, _answer, _phone, _phone_chart_fits, _start, _wait_count, close_poll, css, open_poll,
)
from tests.browser_support import Room, assert_clean, settle, wait_text
from ui.strings.classroom import EN, ZH
from ui.strings.phone import EN as PHONE_EN, ZH as PHONE_ZH

pytestmark = pytest.mark.browser

LANG = os.environ.get("CLASS_REVEAL_LANG", "en")
S = ZH if LANG == "zh" else EN
P = PHONE_ZH if LANG == "zh" else PHONE_EN
CHANGE_IT = P["phone.sent"].split("**")[-1].strip(" 。.：:")  # "You can change it until the lecturer reveals"


@pytest.fixture(scope="module")
def room(browser):
    r = Room(browser)
    yield r
    r.close()


def _step_is(page, n: int) -> None:
    page.wait_for_function("n => location.search.includes('step=' + n)", arg=n, timeout=180_000)


def _phone_step_is(page, n: int) -> None:
    wait_text(page, "#progress", f"step {n} of 9" if LANG == "en" else f"第 {n} / 9 步")


def _revealed_everywhere(lecturers, phones, n: int) -> None:
    """Step n revealed on every lecturer tab (its answer, no Reveal) and on every phone (its result, the class's
    chart, the lesson's chart; no answer buttons, nothing saying the answer may still change)."""
    answer_is = S["class.reveal_answer"].split("**")[0]
    for page in lecturers:
        _step_is(page, n)
        wait_text(page, css("class.question"), answer_is)
        # a second tab learns of the reveal from its live bar's next run (seconds): Reveal goes, and stays gone
        page.wait_for_selector(css("class.reveal"), state="detached", timeout=180_000)
        settle(page)
        assert page.locator(css("class.reveal")).count() == 0
    for page in phones:
        _phone_step_is(page, n)
        page.wait_for_selector(".verdict", timeout=180_000)
        page.wait_for_selector(".bar")  # the class's answers
        page.wait_for_selector("#chart .main-svg", timeout=120_000)  # the lesson's chart, revealed
        assert page.locator("#options button").count() == 0
        assert CHANGE_IT not in page.inner_text("body")


def _click_now(page, key: str) -> None:
    """A click sent without waiting (two tabs' clicks leave within milliseconds of each other)."""
    page.evaluate("sel => document.querySelector(sel).click()", css(key) + " button")


def _shoot(pages: dict, name: str) -> None:
    folder = os.environ.get("CLASS_REVEAL_SHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for who, page in pages.items():
        page.screenshot(path=str(Path(folder) / f"{name}-{who}-{LANG}.png"))


def test_a_reveal_holds_through_a_poll_a_changed_answer_and_a_racing_next(room, browser):
    lecturer, code = _start(room, LANG)
    tab_b = lecturer.context.new_page()  # the lecturer's second tab: its cookie makes it the lecturer
    tab_b.set_default_timeout(90_000)
    tab_b.goto(f"{room['url']}/?class={code}&ui.lang={LANG}&ui.presenter=true")
    tab_b.wait_for_selector(css("class.reveal"), timeout=180_000)
    phones = [_phone(room, code, lang=LANG) for _ in range(2)]
    lecturers = [lecturer, tab_b]
    joined = S["class.count"].format(joined=2, answered=2)
    for page, i in zip(phones, [0, 1]):
        _answer(page, i)
    _wait_count(lecturer, joined)

    # 1. reveal, a quick poll opened and closed: the question stays revealed
    settle(lecturer)
    lecturer.locator(css("class.reveal") + " button").click()
    _revealed_everywhere(lecturers, phones, 1)
    open_poll(lecturer, LANG, "Ready?", "yes\nnot yet")
    for page in phones:
        wait_text(page, "#question", "Ready?")  # the lecturer's rerun opens it: minutes on a loaded 2-core CI machine
        page.wait_for_selector("#options button")
    _answer(phones[0], 0)
    close_poll(lecturer, LANG)
    _revealed_everywhere(lecturers, phones, 1)
    _wait_count(lecturer, joined)
    _shoot({"lecturer": lecturer, "phone": phones[0]}, "reveal-poll-close")

    # a changed answer after the reveal, sent as the phone (its own student id): refused by the store
    store = ClassStore()  # the server's database (EXPLORER_DATA_DIR, tests/conftest.py)
    try:
        sid = next(c["value"] for c in phones[0].context.cookies() if c["name"] == "explorer_student")
        before = store.counts(code, "numpy_decoder:1")
        with pytest.raises(AnswerClosed):
            store.answer(code, sid, "numpy_decoder:1", 1)
        after = store.counts(code, "numpy_decoder:1")
        assert after == before and (after["joined"], after["answered"], after["distribution"]) == (2, 2, {0: 1, 1: 1})
        settle(lecturer)
        assert joined in lecturer.locator(COUNT).inner_text().replace("\n", " ")

        # 2. Reveal and Next together from the two tabs, in both orders: revealed, then next
        settle(lecturer)
        lecturer.locator(css("class.next") + " button").click()
        for n, first in ((2, "reveal"), (3, "next")):
            for page in lecturers:
                _step_is(page, n)
                page.wait_for_selector(css("class.reveal"), timeout=180_000)
                settle(page)
            clicks = [(lecturer, "class.reveal"), (tab_b, "class.next")]
            for page, key in clicks if first == "reveal" else clicks[::-1]:
                _click_now(page, key)
            for page in lecturers:
                _step_is(page, n + 1)
            for page in phones:
                _phone_step_is(page, n + 1)
            state = store.state(code)
            assert state["question"] == f"numpy_decoder:{n + 1}" and not state["revealed"], (n, first)
            assert store.is_revealed(code, f"numpy_decoder:{n}"), (n, first)  # never unrevealed
        for page in lecturers:
            page.wait_for_selector(css("class.reveal"), timeout=180_000)  # step 4's question is open
        # Back: step 3 (whose Next came first) is revealed on the lecturer's screens and on the phones
        settle(tab_b)
        tab_b.locator(css("lessons.back") + " button").click()
        _revealed_everywhere(lecturers, phones, 3)
        for page in lecturers:
            assert_clean(page)

        # 3. on to step 5 (Layer norms) and its reveal: the chart's two panels, legend and long title fit a phone
        for n in (4, 5):
            settle(tab_b)
            tab_b.locator(css("class.next") + " button").click()
            _step_is(tab_b, n)
        settle(tab_b)
        tab_b.locator(css("class.reveal") + " button").click()
        for page in phones:
            _phone_step_is(page, 5)
            _phone_chart_fits(page)
        _shoot({"phone": phones[0]}, "reveal-norms")
    finally:
        store.close()
