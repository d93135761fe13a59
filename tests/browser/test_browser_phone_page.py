"""The students' light phone page in class mode (issue 34), in real browsers: a lecturer in the full app (1280 × 720,
presenter mode) and phones (390 × 844) on ``/join``, as people use them.

One class, in order (the tests share the server, the contexts and the class):

1. the lecturer opens lesson "A GPT decoder, the NumPy way" and starts a class; the QR code's link is the light
   page; a phone opens it (English), another types the code into ``/join`` (Chinese); both see the step's
   question with its options, large enough to tap;
2. they answer (one changes her mind): the lecturer's count says 2 of 2; the student's cookie is HttpOnly
   (``document.cookie`` does not show it);
3. the server is killed and started again mid-question: an answer given while it is down is kept by the phone and
   arrives once it is back; the phones come back to the question by themselves;
4. the lecturer reveals: each phone shows the right answer and its own, the class's answers, and the lesson's
   chart drawn by plotly.js from the app server (the offline guard fails the test on any other host);
5. Next: the phones follow to step 2.
"""

from __future__ import annotations

import re

import pytest

from tests.browser_support import LAPTOP, PHONE, SHOTS, Room, key_css, settle
from ui.strings.classroom import EN as CLASS_EN
from ui.strings.phone import EN, ZH

pytestmark = pytest.mark.browser

LESSON = "/attention?lesson=numpy_decoder&step=1"
COUNT = ".st-key-class-count"
css = key_css


@pytest.fixture(scope="module")
def room(browser):
    r = Room(browser)
    yield r
    r.close()


def _count(page) -> str:
    return page.locator(COUNT).inner_text().replace("\n", " ")


def _wait_count(page, text: str) -> None:
    page.wait_for_function("([sel, t]) => (document.querySelector(sel)?.innerText || '').replace(/\\n/g, ' ')"
                           ".includes(t)", arg=[COUNT, text], timeout=120_000)


def _shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"phone-page-{name}.png"), full_page=True)


def test_phones_join_by_link_and_by_code(room):
    lecturer = room.page(**LAPTOP)
    lecturer.goto(room["url"] + LESSON + "&ui.lang=en&ui.presenter=true")
    lecturer.wait_for_selector('[data-testid="stSidebar"]')
    settle(lecturer)
    lecturer.locator('[data-testid="stSidebar"]').get_by_text(CLASS_EN["class.section"]).click()
    lecturer.locator(css("class.start") + " button").first.click()
    lecturer.wait_for_selector(COUNT, timeout=180_000)
    code = re.search(r"([A-HJ-NP-Z2-9]{6})", _count(lecturer)).group(1)
    link = lecturer.locator('[data-testid="stSidebar"] .share-qr-link').filter(has_text="/join/").first.inner_text()
    assert link.endswith(f"/join/{code}"), link  # the QR code's link: the light page
    room.update(lecturer=lecturer, code=code)

    en = room.page(**PHONE)
    en.goto(f"{room['url']}/join/{code}?lang=en")
    en.wait_for_selector("#options button")
    zh = room.page(**PHONE, locale="zh-CN")
    zh.goto(f"{room['url']}/join")  # no code in the link: the form, in the browser's language
    assert zh.locator("#join-title").inner_text() == ZH["phone.join_title"]
    zh.locator("#code").fill(code.lower())
    zh.locator("#join-button").click()
    zh.wait_for_selector("#options button")
    for phone, lang in ((en, "en"), (zh, "zh")):
        assert phone.locator("#title").inner_text().endswith(code)
        assert "Q·K" in phone.locator("#question").inner_text()  # the step's question, in the reader's language
        buttons = phone.locator("#options button")
        assert buttons.count() >= 2
        box = buttons.first.bounding_box()
        assert box["height"] >= 48 and box["width"] >= 300  # a thumb's target on a 390 px phone
        size = phone.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 16  # readable without zoom
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        _shot(phone, f"question-{lang}")
    room.update(en=en, zh=zh)


def test_answers_reach_the_lecturer_and_the_cookie_is_httponly(room):
    en, zh, lecturer = room["en"], room["zh"], room["lecturer"]
    en.locator("#options button").nth(0).click()
    en.wait_for_function("document.querySelector('#status').innerText.includes('Sent')")
    en.locator("#options button").nth(1).click()  # changed her mind
    en.wait_for_function(f"document.querySelector('#status').innerText.includes({en.locator('#options button').nth(1).inner_text().split(' ', 1)[1]!r})")
    zh.locator("#options button").nth(1).click()
    zh.wait_for_function("document.querySelector('#status').innerText.includes('已发送')")
    _wait_count(lecturer, "2 of 2")
    for phone in (en, zh):
        assert "explorer_student" not in phone.evaluate("document.cookie")  # HttpOnly: no page script reads it
        cookies = {c["name"]: c for c in phone.context.cookies()}
        assert cookies["explorer_student"]["httpOnly"] and cookies["explorer_student"]["sameSite"] == "Lax"


def test_an_answer_given_while_the_server_is_down_arrives_after_it_restarts(room):
    en = room["en"]
    room.kill()
    en.locator("#options button").nth(2).click()  # the server is down: the phone keeps it
    en.wait_for_function("document.querySelector('#status').innerText.includes('Not sent yet')", timeout=30_000)
    room.restart()
    en.wait_for_function("document.querySelector('#status').innerText.includes('Sent')", timeout=120_000)
    assert "2" in en.locator("#options button.picked").inner_text() or en.locator("#options button.picked").count() == 1
    lecturer = room["lecturer"]
    lecturer.reload()
    lecturer.wait_for_selector(COUNT, timeout=180_000)
    _wait_count(lecturer, "2 of 2")  # the lecturer is back in the class with both answers kept


def test_the_reveal_shows_the_answer_the_class_and_the_chart(room):
    lecturer, en, zh = room["lecturer"], room["en"], room["zh"]
    settle(lecturer)
    lecturer.locator(css("class.reveal") + " button").click()
    for phone, words in ((en, EN), (zh, ZH)):
        phone.wait_for_selector(".verdict", timeout=60_000)
        phone.wait_for_selector(".bar")
        phone.wait_for_selector("#chart .main-svg", timeout=120_000)  # the lesson's chart, by plotly.js from the app
        assert phone.locator("#explore").get_attribute("href").startswith(room["url"] + "/attention?lesson=numpy_decoder")
        _shot(phone, f"reveal-{'en' if words is EN else 'zh'}")
    _shot(lecturer, "lecturer-reveal-en")
    assert "√" in en.locator("#reveal").inner_text()  # the explanation names the scale
    assert en.locator(".verdict").inner_text().startswith(("✅", "❌"))


def test_next_moves_the_phones_to_step_two(room):
    lecturer, en, zh = room["lecturer"], room["en"], room["zh"]
    lecturer.locator(css("class.next") + " button").click()
    for phone in (en, zh):
        phone.wait_for_function("document.querySelector('#progress').innerText.includes('2')", timeout=60_000)
        phone.wait_for_selector("#options button")
    assert "mask" in en.locator("#question").inner_text()
