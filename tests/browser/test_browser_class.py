"""Class mode in real browsers (issue 24): a lecturer and six students on one server, as people use it.

One class, in order (the tests share the server, the browser contexts and the class):

1. the lecturer (1280 × 720, presenter mode) opens lesson "A GPT decoder, the NumPy way" and clicks "Start a
   class" in the sidebar; three students open the join link on phones (390 × 844), two type the code into the
   sidebar's join form on laptops, one more joins by link in Chinese; each sees the step's question first;
2. five answer (one changes her mind): the lecturer's count and chart follow within seconds, with the numbers
   the students gave; the chart stays hidden ("predict first") on every screen;
3. a student cannot act as the lecturer: the lecturer link with a guessed secret, a forged lecturer cookie and a
   forged click on the lecturer's buttons (they are not on the page) change nothing; the secret appears on no
   student's page;
4. the server is killed (SIGKILL) and started again mid-question: every page comes back to the class, the answers
   are kept (each student's button still marked), the lecturer's count is the same; a phone that lost the
   question box (as Streamlit under load sometimes left one) reloads itself and is back with its answer;
5. the lecturer reveals: every student sees the right answer, their own and the class's chart; the lesson's chart
   is drawn; "Next" moves everyone to step 2, then step 3 (three steps followed), and a phone's question is on
   its first screen; then to step 5, an estimate on another page, typed on a phone and counted;
6. a quick poll in the middle of that question: the students see the poll, the question's chart stays hidden;
   closing the poll brings the question back with its answer kept;
7. a second class at the same time (its lecturer in Chinese, a quick poll) does not mix with the first: its
   students see the poll, not the lesson; each class's counts are its own; ending it sends its students off.
"""

from __future__ import annotations

import contextlib
import re
import time

import pytest

from tests.browser_support import CHROMIUM, assert_clean, free_port, settle, start_server
from ui.strings.classroom import EN, ZH

pytestmark = pytest.mark.browser

LESSON = "/attention?lesson=numpy_decoder&step=1"
PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2)
LAPTOP = dict(viewport={"width": 1280, "height": 720})
COUNT = ".st-key-class-count"


def css(key: str) -> str:
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


@pytest.fixture(scope="module")
def room(browser):
    """The server (restartable on its port), and the people: filled in by the tests in order."""
    port = free_port()
    proc, url = start_server(port)
    state = {"url": url, "port": port, "proc": proc, "students": [], "contexts": []}
    yield state
    for ctx in state["contexts"]:
        ctx.close()
    state["proc"].kill()
    state["proc"].wait(timeout=20)


def _page(room, browser, **kwargs):
    ctx = browser.new_context(**kwargs)
    room["contexts"].append(ctx)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    return page


def _open_class_section(page, lang: str = "en") -> None:
    strings = EN if lang == "en" else ZH
    side = page.locator('[data-testid="stSidebar"]')
    side.get_by_text(strings["class.section"]).click()


def _count(page) -> str:
    return page.locator(COUNT).inner_text().replace("\n", " ")


def _wait_text(page, selector: str, text: str, timeout: float = 180_000) -> None:
    """Wait until the element's text contains ``text`` (a page shows a change once its own rerun has finished)."""
    try:
        page.wait_for_function("([sel, t]) => (document.querySelector(sel)?.innerText || '').replace(/\\n/g, ' ')"
                               ".includes(t)", arg=[selector, text], timeout=timeout)
    except Exception as err:  # noqa: BLE001 -- say what the element showed
        shown = page.locator(selector).inner_text().replace("\n", " ")
        raise AssertionError(f"waited for {text!r} in {selector}; it shows {shown!r}") from err


def _wait_count(page, text: str, timeout: float = 180_000) -> None:
    _wait_text(page, COUNT, text, timeout)


def _start(room, browser, lang: str, path: str = LESSON):
    page = _page(room, browser, **LAPTOP)
    page.goto(room["url"] + path + ("&" if "?" in path else "?") + f"ui.lang={lang}&ui.presenter=true")
    page.wait_for_selector('[data-testid="stSidebar"]')
    settle(page)
    _open_class_section(page, lang)
    page.locator(css("class.start") + " button").first.click()
    page.wait_for_selector(COUNT, timeout=180_000)
    settle(page)
    code = re.search(r"([A-HJ-NP-Z2-9]{6})", _count(page)).group(1)
    return page, code


def _join_by_link(room, browser, code: str, lang: str = "en", **kwargs):
    page = _page(room, browser, **(kwargs or PHONE))
    page.goto(f"{room['url']}/?class={code}" + ("&ui.lang=zh" if lang == "zh" else ""))
    page.wait_for_selector(css("class.student_bar"), timeout=90_000)
    settle(page)
    return page


def _join_by_code(room, browser, code: str, nickname: str):
    page = _page(room, browser, **LAPTOP)
    page.goto(room["url"] + "/overview")
    page.wait_for_selector('[data-testid="stSidebar"]')
    settle(page)
    _open_class_section(page)
    page.locator(css("class.join_code") + " input").fill(code.lower())  # typed in lower case: still the class
    page.locator(css("class.nickname") + " input").fill("<b>Ann</b>")
    page.locator(css("class.join") + " button").click()
    page.wait_for_selector(css("class.student_bar"), timeout=90_000)
    settle(page)
    return page


def _answer(page, i: int) -> None:
    page.locator(css(f"class.answer.{i}") + " button").click()
    page.wait_for_selector(css(f"class.answer.{i}") + ' button[kind="primary"]', timeout=30_000)


def test_a_class_joins_by_link_and_by_code_and_sees_the_question_first(room, browser):
    lecturer, code = _start(room, browser, "en")
    room.update(lecturer=lecturer, code=code)
    assert "step 1 of 9" in lecturer.locator(css("class.question")).inner_text()
    phones = [_join_by_link(room, browser, code) for _ in range(3)]
    laptops = [_join_by_code(room, browser, code, "Ann") for _ in range(2)]
    zh = _join_by_link(room, browser, code, lang="zh")
    room["students"] = phones + laptops + [zh]
    _wait_count(lecturer, "6 joined")
    for page in room["students"]:
        assert "step=1" in page.url and "lesson=numpy_decoder" in page.url
        assert page.locator(css("class.answer")).count() == 1
        assert page.locator(css("class.reveal")).count() == 0 and page.locator(css("class.next")).count() == 0
        assert_clean(page)
    for phone in phones:  # the question and its options on the phone's first screen, the sidebar closed
        box = phone.locator(css("class.answer")).bounding_box()
        assert box["y"] + box["height"] <= 844 and box["x"] + box["width"] <= 390
        assert phone.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0
    assert ZH["class.following"].split("**")[0] in zh.inner_text("body")
    # the roster (lecturer only) shows the typed nickname as text, not as HTML
    lecturer.locator(css("class.roster")).get_by_text("Roster (6)").click()
    roster = lecturer.locator(css("class.roster")).inner_text()
    assert "<b>Ann</b>" in roster and EN["class.roster_anonymous"].format(n=4) in roster  # 3 phones + 1 zh: unnamed


def test_answers_reach_the_lecturers_count_and_chart_while_the_chart_waits(room, browser):
    lecturer, students = room["lecturer"], room["students"]
    picks = [0, 1, 1, 2, 1]
    for page, i in zip(students, picks):
        _answer(page, i)
    _wait_count(lecturer, "5 of 6 answered")
    _answer(students[0], 1)  # changed her mind: still one answer, now for option 1
    lecturer.wait_for_function("() => document.body.innerText.includes('Most picked') && "
                               "/\\(4, 80%\\)/.test(document.body.innerText)", timeout=180_000)
    assert "5 of 6 answered" in _count(lecturer)
    for page in [lecturer, *students]:  # predict first: the lesson's chart waits for the reveal
        assert page.locator(css("attn.heatmap.chart")).count() == 0
    # the projector is the room's screen: the lecturer keeps the answers off it, and the count stays
    bar = lecturer.locator(css("class.bar"))
    lecturer.locator(css("class.show_answers")).get_by_text(EN["class.show_answers"]).click()
    _wait_text(lecturer, css("class.bar"), EN["class.answers_hidden"])
    assert "Most picked" not in bar.inner_text() and lecturer.locator(css("class.distribution")).count() == 0
    assert "5 of 6 answered" in _count(lecturer)
    lecturer.locator(css("class.show_answers")).get_by_text(EN["class.show_answers"]).click()
    _wait_text(lecturer, css("class.bar"), "Most picked")


def test_a_student_cannot_act_as_the_lecturer(room, browser):
    lecturer, code, student = room["lecturer"], room["code"], room["students"][3]
    lecturer.locator('[data-testid="stSidebar"]').get_by_text(EN["class.lecturer_link"]).click()
    secret_link = lecturer.locator(css("class.lecturer_link")).inner_text().strip()
    secret = secret_link.split("lecturer=")[1]
    # a guessed secret in the link: refused, the student stays a student, the parameter leaves the address bar
    student.goto(f"{room['url']}/?class={code}&lecturer=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    student.wait_for_selector(css("class.student_bar"))
    settle(student)
    assert "not valid" in student.inner_text("body") and "lecturer=" not in student.url
    # a forged lecturer cookie: still a student
    student.context.add_cookies([{"name": "explorer_lecturer", "value": f"{code}:{secret[:-2]}xx",
                                  "url": room["url"]}])
    student.reload()
    student.wait_for_selector(css("class.student_bar"))
    settle(student)
    assert student.locator(css("class.reveal")).count() == 0 and student.locator(css("class.end")).count() == 0
    # a forged click: the lecturer's buttons are not on a student's page, and the class did not move
    for key in ("class.reveal", "class.next", "class.end"):
        assert student.locator(css(key)).count() == 0
    _wait_count(lecturer, "5 of 6 answered")
    for page in room["students"]:
        assert secret not in page.content()
    assert "step=1" in student.url


@contextlib.contextmanager
def _reconnected(pages, timeout_s: float = 180):
    """Wait until each page has a websocket to the restarted server that has brought it a run: the page's text
    before the restart reads the same, and a click sent before the new session's first run is dropped."""
    frames = {id(page): 0 for page in pages}

    def watch(page):
        def on_socket(ws):
            ws.on("framereceived", lambda _frame: frames.__setitem__(id(page), frames[id(page)] + 1))
        return on_socket

    for page in pages:
        page.on("websocket", watch(page))
    yield
    deadline = time.monotonic() + timeout_s
    for page in pages:
        while frames[id(page)] == 0:
            assert time.monotonic() < deadline, "a page did not reconnect to the restarted server"
            page.wait_for_timeout(250)
        settle(page)


def test_a_restarted_server_keeps_the_class_its_step_and_every_answer(room, browser):
    lecturer, students = room["lecturer"], room["students"]
    with _reconnected([lecturer, *students]):
        room["proc"].kill()
        room["proc"].wait(timeout=20)
        room["proc"], _ = start_server(room["port"])
    _wait_count(lecturer, "5 of 6 answered", timeout=120_000)
    for page, i in zip(students, [1, 1, 1, 2, 1]):  # each student's answer is still marked on their button
        page.wait_for_selector(css(f"class.answer.{i}") + ' button[kind="primary"]', timeout=120_000)
        assert "step=1" in page.url


def test_a_phone_that_lost_the_question_box_gets_it_back(room, browser):
    """Under load Streamlit sometimes left a phone without the box the server had drawn: the phone's own check
    reloads it, and it comes back to the class with its answer."""
    page = room["students"][2]
    settle(page)
    with page.expect_event("load", timeout=90_000):  # the box gone from the page (its class renamed)
        page.evaluate("document.querySelector('.st-key-class-question').classList.remove('st-key-class-question')")
        assert page.locator(css("class.question")).count() == 0
    page.wait_for_selector(css("class.answer.1") + ' button[kind="primary"]', timeout=120_000)
    assert "step=1" in page.url and "class=" in page.url


def test_the_reveal_and_next_reach_every_student(room, browser):
    lecturer, students = room["lecturer"], room["students"]
    settle(lecturer)
    lecturer.locator(css("class.reveal") + " button").click()
    for page in students[:5]:
        page.wait_for_selector(css("class.distribution"), timeout=180_000)
        text = page.locator(css("class.question")).inner_text()
        assert "The answer is" in text or "Right" in text
        page.wait_for_selector(css("attn.heatmap.chart"), timeout=180_000)  # the lesson's chart, revealed
    zh_text = students[5].locator(css("class.question")).inner_text()
    assert "答案是" in zh_text or "答对了" in zh_text
    assert "5 of 6 answered" in _count(lecturer)
    for step in (2, 3):  # three steps followed
        settle(lecturer)
        lecturer.locator(css("class.next") + " button").click()
        for page in students:
            page.wait_for_function("n => location.search.includes('step=' + n)", arg=step, timeout=180_000)
            page.wait_for_selector(css("class.answer"), timeout=180_000)
        assert_clean(lecturer)
    phone = students[0]
    box = phone.locator(css("class.answer")).bounding_box()
    assert box["y"] + box["height"] <= 844
    # on to step 5, an estimate on another page (Layer norms): typed on a phone, counted on the lecturer's screen
    for step in (4, 5):
        settle(lecturer)
        lecturer.locator(css("class.next") + " button").click()
        lecturer.wait_for_function("n => location.search.includes('step=' + n)", arg=step, timeout=180_000)
    for page in students:
        page.wait_for_function("() => location.pathname.endsWith('/norms') && location.search.includes('step=5')",
                               timeout=180_000)
    phone.wait_for_selector(css("class.answer.value") + " input", timeout=180_000)
    phone.locator(css("class.answer.value") + " input").fill("4")
    phone.locator(css("class.answer.send") + " button").click()
    _wait_count(lecturer, "1 of 6 answered")
    _wait_text(phone, css("class.question"), "Your estimate: 4")  # the phone's own rerun may end after the count
    for page in [lecturer, *students]:  # the chart waits for the reveal (on a loaded machine: once the page settled)
        settle(page)
        assert page.locator(css("norms.residual.chart")).count() == 0, page.url
        assert_clean(page)


def test_a_quick_poll_in_the_middle_of_a_question_gives_nothing_away(room, browser):
    lecturer, students = room["lecturer"], room["students"]
    side = lecturer.locator('[data-testid="stSidebar"]')
    side.get_by_text(EN["class.poll"]).click()
    lecturer.locator(css("class.poll.question") + " input").fill("Ready?")
    lecturer.locator(css("class.poll.options") + " textarea").fill("yes\nnot yet")
    lecturer.locator(css("class.poll.open") + " button").click()
    for page in students[:3]:
        page.wait_for_selector(css("class.answer.1"), timeout=180_000)
        assert "Ready?" in page.locator(css("class.question")).inner_text()
        assert page.locator(css("norms.residual.chart")).count() == 0  # the open question's chart stays hidden
    _answer(students[0], 0)
    _wait_count(lecturer, "1 of 6 answered")
    settle(lecturer)
    lecturer.locator(css("class.next") + " button").click()  # "Close the poll": back to step 5, its answers kept
    _wait_count(lecturer, "1 of 6 answered")
    students[0].wait_for_selector(css("class.answer.value") + " input", timeout=180_000)
    assert "step=5" in students[0].url


def test_two_classes_at_once_do_not_mix(room, browser):
    lecturer_b, code_b = _start(room, browser, "zh", path="/overview")
    assert code_b != room["code"]
    side = lecturer_b.locator('[data-testid="stSidebar"]')
    side.get_by_text(ZH["class.poll"]).click()
    lecturer_b.locator(css("class.poll.question") + " input").fill("你最喜欢哪个页面？")
    lecturer_b.locator(css("class.poll.options") + " textarea").fill("注意力\n损失\n生成")
    lecturer_b.locator(css("class.poll.open") + " button").click()
    settle(lecturer_b)
    student_b = _join_by_link(room, browser, code_b, lang="zh")
    student_b.wait_for_selector(css("class.answer.2"))
    assert "你最喜欢哪个页面" in student_b.locator(css("class.question")).inner_text()
    _answer(student_b, 2)
    _wait_count(lecturer_b, ZH["class.count"].format(joined=1, answered=1))
    # class A is where it was: its students still on step 3 of the lesson, its count its own
    a_student = room["students"][1]
    assert "step=5" in a_student.url and "你最喜欢" not in a_student.inner_text("body")
    assert "6 joined" in _count(room["lecturer"])
    assert ZH["class.count"].format(joined=1, answered=1) in _count(lecturer_b)
    # ending class B sends its student off; class A goes on
    lecturer_b.locator(css("class.end") + " button").click()
    student_b.wait_for_function("() => document.body.innerText.includes('已结束')", timeout=180_000)
    settle(student_b)
    assert student_b.locator(css("class.student_bar")).count() == 0
    assert "6 joined" in _count(room["lecturer"])
    for page in (lecturer_b, student_b, room["lecturer"]):
        assert_clean(page)
