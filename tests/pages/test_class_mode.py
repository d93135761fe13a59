"""Class mode under AppTest (ui/teaching/class_mode.py through app.py): hostile join links get a message and no class; a
session that forges the lecturer's role or secret cannot move, reveal or end a class (the store refuses, the
class's state is unchanged); the "Start a class" button makes a class whose secret only the session holds; a
quick poll with too few options is refused with a message; a poll keeps the lesson step it interrupts. The
browser test (tests/browser/test_browser_class.py) runs the whole class; here each rule is checked against the
store's own state; a store that does not answer for now keeps everyone in the class."""

from __future__ import annotations

import time

import pytest

from teaching.classroom import ClassStore, StoreUnavailable, new_student_id
from tests.page_helpers import open_page
from ui.strings.classroom import EN
from teaching.course import Pointer
from ui.teaching.class_mode import ClassSeat, forget
from ui.teaching.steps import SEAT_KEY



@pytest.fixture(scope="module")
def store():
    s = ClassStore()  # the tests' store (tests/conftest.py: a temporary EXPLORER_DATA_DIR), the app's too
    yield s
    s.close()


def progress_of(at, lesson_id: str) -> dict:
    """The session's answer records for a lesson ({} before any)."""
    p = (at.session_state[SEAT_KEY].progress or {}).get(lesson_id)
    return p.answers if p else {}


def _seat(at) -> ClassSeat:
    """The session's class seat (a fresh one when the session never touched a class)."""
    return at.session_state["class.seat"] if "class.seat" in at.session_state else ClassSeat()


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


@pytest.mark.parametrize("raw", ["<script>alert(1)</script>", "A" * 300, "OOOOOO", "../../etc/passwd"])
def test_a_hostile_class_parameter_gets_a_message_and_no_class(raw):
    at = open_page(query={"class": raw}, defaults=False, lang=None)
    assert not at.exception
    assert EN["class.err.bad_code"] in _warnings(at)
    assert _seat(at).role is None and "class" not in at.query_params


def test_an_unknown_code_says_so():
    at = open_page(query={"class": "ZZZZZZ"}, defaults=False, lang=None)
    assert not at.exception
    assert EN["class.err.unknown"].format(code="ZZZZZZ") in _warnings(at)
    assert _seat(at).role is None


def test_start_a_class_makes_a_class_whose_secret_only_the_session_holds(store):
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    assert not at.exception
    code, secret = _seat(at).code, _seat(at).secret
    store.check_lecturer(code, secret)  # the store accepts it: this session is the lecturer
    assert at.query_params["class"] == [code] or at.query_params["class"] == code
    assert store.state(code)["step"] == {"kind": "page", "page": "overview"}  # the lecturer's step: this page


@pytest.mark.parametrize("forged", ["", "guess", "x" * 43])
def test_a_student_who_forges_the_lecturer_role_changes_nothing(store, forged):
    code, secret = store.create_class()
    store.set_step(code, secret, {"kind": "poll", "question": "poll:1", "prompt": "?", "options": ["a", "b"],
                                  "page": "overview"})
    sid = new_student_id()
    store.join(code, sid)
    store.answer(code, sid, "poll:1", 0)
    before = store.state(code)
    at = open_page(query={"class": code}, defaults=False)
    assert _seat(at).role == "student"
    # the forged session: it claims to be the lecturer, with a guessed secret, and presses what a lecturer would
    _seat(at).role = "lecturer"
    _seat(at).secret = forged
    at.run()
    assert not at.exception
    after = store.state(code)
    assert (after["step"], after["step_seq"], after["revealed"], after["ended"]) == (
        before["step"], before["step_seq"], before["revealed"], before["ended"])
    assert EN["class.err.not_lecturer_action"].format(code=code) in _warnings(at)
    assert _seat(at).role is None  # it was sent out of the class, not made its lecturer
    assert store.counts(code, "poll:1")["answered"] == 1


def test_a_quick_poll_needs_two_to_six_different_options(store):
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code = _seat(at).code
    for options in ("only one", "same\nsame", "\n".join(f"o{i}" for i in range(7))):
        at.text_input(key="class.poll.question").set_value("Which?")
        at.text_area(key="class.poll.options").set_value(options)
        at.button(key="class.poll.open").click().run()
        assert EN["class.poll_bad"] in _warnings(at)
        assert store.state(code)["step"]["kind"] == "page"
    at.text_area(key="class.poll.options").set_value("yes\nno")
    at.button(key="class.poll.open").click().run()
    step = store.state(code)["step"]
    assert step["kind"] == "poll" and step["options"] == ["yes", "no"] and step["prompt"] == "Which?"


def test_a_poll_keeps_the_lesson_step_it_interrupts_open_for_a_student(store):
    """A student whose session has no lesson open (a new session, or one that lost it) takes the lesson step a
    poll names: the step's question stays unanswered, so its chart stays hidden, and the poll is asked."""
    code, secret = store.create_class()
    store.set_step(code, secret, {"kind": "poll", "question": "poll:2", "prompt": "Ready?", "options": ["yes", "no"],
                                  "page": "attention", "lesson": "numpy_decoder", "step": 2})
    at = open_page(query={"class": code}, defaults=False)
    assert not at.exception
    assert _seat(at).role == "student"
    assert at.session_state[SEAT_KEY].active == Pointer("numpy_decoder", 2)
    assert "2" not in progress_of(at, "numpy_decoder")


def _class_step(n: int) -> dict:
    return {"kind": "lesson", "lesson": "numpy_decoder", "step": n, "page": "attention",
            "question": f"numpy_decoder:{n}"}


def test_a_revealed_question_stays_revealed_after_a_quick_poll(store):
    """Issue 32: after a reveal, a quick poll opened and closed re-opened the question on the phones ("you can
    change it until the lecturer reveals", the chart hidden again). Now the student's session keeps the reveal
    (its lesson progress holds the graded answer, the chart's gate stays open) and has no answer buttons."""
    code, secret = store.create_class()
    seq = store.set_step(code, secret, _class_step(1))
    at = open_page(query={"class": code}, defaults=False)
    assert _seat(at).role == "student"
    at.button(key="class.answer.1").click().run()
    assert not at.exception
    store.reveal(code, secret, "numpy_decoder:1")
    forget(code)  # the lecturer's click does this in the app; here the store moved behind the process's state cache
    at.run()
    answers = progress_of(at, "numpy_decoder")
    assert answers["1"]["picked"] == 1 and not [b for b in at.button if b.key.startswith("class.answer")]
    seq = store.set_step(code, secret, {"kind": "poll", "question": "poll:3", "prompt": "Ready?",
                                        "options": ["yes", "no"], "page": "attention", "lesson": "numpy_decoder",
                                        "step": 1}, expect_seq=seq)
    forget(code)
    at.run()
    assert any(b.key == "class.answer.0" for b in at.button)  # the poll is asked
    assert progress_of(at, "numpy_decoder")["1"]["picked"] == 1
    store.set_step(code, secret, _class_step(1), expect_seq=seq)  # the poll closed
    forget(code)
    at.run()
    assert not at.exception and store.state(code)["revealed"]
    assert progress_of(at, "numpy_decoder")["1"]["picked"] == 1
    assert not [b for b in at.button if b.key.startswith("class.answer")]
    shown = " ".join(m.value for m in [*at.markdown, *at.caption, *at.success, *at.error, *at.info])
    assert "change it until" not in shown


def test_the_lecturer_downloads_results_whose_counts_are_the_answers_given(store):
    """Issue 34, results to keep: a quick poll answered by three students (2 yes, 1 no); the lecturer prepares the
    results in the sidebar: one question, its counts as given, in the CSV and in the HTML report (offline: no
    script, nothing from another host)."""
    from ui.teaching.class_results import report_html, results_frame

    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code, secret = _seat(at).code, _seat(at).secret
    at.text_input(key="class.poll.question").set_value("Ready?")
    at.text_area(key="class.poll.options").set_value("yes\nno")
    at.button(key="class.poll.open").click().run()
    question = store.state(code)["question"]
    for value in (0, 0, 1):
        sid = new_student_id()
        store.join(code, sid)
        store.answer(code, sid, question, value)
    at.button(key="class.results.make").click().run()
    assert not at.exception
    assert EN["class.results_ready"].format(n=1) in [c.value for c in at.caption]
    labels = {str(d.proto.label) for d in at.get("download_button")}
    assert {EN["class.results_csv"], EN["class.results_html"]} <= labels
    frame = results_frame(store.results(code, secret), "en")  # what the buttons hold
    assert frame[EN["class.results.col.answers"]].tolist() == ["yes: 2; no: 1"]
    assert frame[EN["class.results.col.answered"]].tolist() == [3]
    assert frame[EN["class.results.col.joined"]].tolist() == [3]
    page = report_html(frame, code, "en")
    assert "yes: 2; no: 1" in page and "Ready?" in page and "<script" not in page and "http" not in page


def test_the_lecturer_closes_joining_and_a_new_phone_is_told(store):
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code = _seat(at).code
    at.toggle(key="class.joining").set_value(False).run()
    assert not at.exception and store.state(code)["joins_closed"]
    phone = open_page(query={"class": code}, defaults=False)
    assert not phone.exception
    assert EN["class.err.joins_closed"].format(code=code) in _warnings(phone)
    # also as a toast (a phone shows it wherever the page is scrolled), once: the link's first run showed it
    assert _seat(phone).toasted == {EN["class.err.joins_closed"].format(code=code)}
    phone.run()
    assert not phone.toast
    assert _seat(phone).role is None  # not in the class
    at.toggle(key="class.joining").set_value(True).run()
    assert not store.state(code)["joins_closed"]
    assert _seat(open_page(query={"class": code}, defaults=False)).role == "student"


def test_a_store_that_does_not_answer_keeps_everyone_in_the_class(store, monkeypatch):
    """The store's StoreUnavailable (a database stopped, locked, restarting: it retried and gave up for now) is said
    as "retrying (n s)"; the lecturer and the student keep their seats, and a link opened meanwhile keeps its code."""
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code = _seat(at).code
    phone = open_page(query={"class": code}, defaults=False)
    assert _seat(phone).role == "student"

    def down(*_args, **_kwargs):
        raise StoreUnavailable("the class database is not answering (connection refused)", since=time.time() - 12,
                               waited_s=2.0)

    monkeypatch.setattr(ClassStore, "state", down)
    monkeypatch.setattr(ClassStore, "join", down)
    forget(code)
    retrying = EN["class.err.unavailable"].split("{seconds}")[0]
    for page, role in ((phone, "student"), (at, "lecturer")):
        page.run()
        assert not page.exception
        assert retrying in _warnings(page) and _seat(page).role == role and _seat(page).code == code
    later = open_page(query={"class": code}, defaults=False)  # a reload during the outage
    assert retrying in _warnings(later) and later.query_params.get("class") == code
    monkeypatch.undo()
    forget(code)
    later.run()
    assert _seat(later).role == "student" and _seat(later).code == code
