"""Class mode under AppTest, the lecturer's session (ui/teaching/class_mode.py through explorer.py): hostile join
links get a message and no class; a join link opened in the full app is sent on to the students' phone page; a
session that forges the lecturer's role or secret cannot move, reveal or end a class (the store refuses, the
class's state is unchanged); the "Start a class" button makes a class whose secret only the session holds; a
quick poll with too few options is refused with a message. The phones' side is tests/ui/test_phone_routes.py,
the whole class in browsers tests/browser/test_browser_class.py; here each rule is checked against the store's own
state; a store that does not answer for now keeps the lecturer in the class."""

from __future__ import annotations

import time

import pytest

from teaching.classroom import ClassStore, StoreUnavailable, new_student_id
from tests.page_helpers import open_page
from ui.strings.classroom import EN, ZH
from ui.teaching.class_mode import ClassSeat, forget



@pytest.fixture(scope="module")
def store():
    s = ClassStore()  # the tests' store (tests/conftest.py: a temporary EXPLORER_DATA_DIR), the app's too
    yield s
    s.close()


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


def test_a_join_link_opened_in_the_app_goes_to_the_phone_page():
    """Said, and no class for the session (the browser is sent on: tests/browser/test_browser_class.py)."""
    for lang in ("en", "zh"):
        at = open_page(query={"class": "zzzzzz", "ui.lang": lang}, defaults=False, lang=None, settle=False)
        assert not at.exception
        said = {"en": EN, "zh": ZH}[lang]["class.to_phone_page"].format(code="ZZZZZZ")
        assert said in _warnings(at) and _seat(at).role is None and "class" not in at.query_params


def test_start_a_class_makes_a_class_whose_secret_only_the_session_holds(store):
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    assert not at.exception
    code, secret = _seat(at).code, _seat(at).secret
    store.check_lecturer(code, secret)  # the store accepts it: this session is the lecturer
    assert at.query_params["class"] == [code] or at.query_params["class"] == code
    assert store.state(code)["step"] == {"kind": "page", "page": "overview"}  # the lecturer's step: this page


@pytest.mark.parametrize("forged", ["", "guess", "x" * 43])
def test_a_session_that_forges_the_lecturer_role_changes_nothing(store, forged):
    code, secret = store.create_class()
    store.set_step(code, secret, {"kind": "poll", "question": "poll:1", "prompt": "?", "options": ["a", "b"],
                                  "page": "overview"})
    sid = new_student_id()
    store.join(code, sid)
    store.answer(code, sid, "poll:1", 0)
    before = store.state(code)
    at = open_page(defaults=False)
    # the forged session: it claims to be the lecturer, with a guessed secret, and presses what a lecturer would
    _seat(at).role, _seat(at).code, _seat(at).secret = "lecturer", code, forged
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
    at.run()  # another rerun (the live bar's, a widget's): the prepared files stay until prepared again
    assert EN["class.results_ready"].format(n=1) in [c.value for c in at.caption]
    assert {EN["class.results_csv"], EN["class.results_html"]} <= {str(d.proto.label) for d in at.get("download_button")}
    frame = results_frame(store.results(code, secret), "en")  # what the buttons hold
    assert frame[EN["class.results.col.answers"]].tolist() == ["yes: 2; no: 1"]
    assert frame[EN["class.results.col.answered"]].tolist() == [3]
    assert frame[EN["class.results.col.joined"]].tolist() == [3]
    page = report_html(frame, code, "en")
    assert "yes: 2; no: 1" in page and "Ready?" in page and "<script" not in page and "http" not in page


def test_the_lecturer_closes_and_opens_joining(store):
    """The toggle is the store's flag (a phone told so: tests/ui/test_phone_routes.py)."""
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code = _seat(at).code
    at.toggle(key="class.joining").set_value(False).run()
    assert not at.exception and store.state(code)["joins_closed"]
    at.toggle(key="class.joining").set_value(True).run()
    assert not store.state(code)["joins_closed"]


def test_a_store_that_does_not_answer_keeps_the_lecturer_in_the_class(store, monkeypatch):
    """The store's StoreUnavailable (a database stopped, locked, restarting: it retried and gave up for now) is said
    as "retrying (n s)"; the lecturer keeps the seat, run after run, and the class's code stays in the address."""
    at = open_page(defaults=False)
    at.button(key="class.start").click().run()
    code = _seat(at).code

    def down(*_args, **_kwargs):
        raise StoreUnavailable("the class database is not answering (connection refused)", since=time.time() - 12,
                               waited_s=2.0)

    monkeypatch.setattr(ClassStore, "state", down)
    monkeypatch.setattr(ClassStore, "check_lecturer", down)
    forget(code)
    retrying = EN["class.err.unavailable"].split("{seconds}")[0]
    at.run()
    assert not at.exception
    assert retrying in _warnings(at) and _seat(at).role == "lecturer" and _seat(at).code == code
    at.run()  # and the next run, while it is still down
    assert _seat(at).role == "lecturer" and at.query_params.get("class") in (code, [code])
    monkeypatch.undo()


def _in_order(node) -> list:
    """Every element under ``node``, in the order the page draws them (depth first)."""
    out = []
    for child in getattr(node, "children", {}).values():
        out.append(child)
        out.extend(_in_order(child))
    return out


def test_the_full_screen_code_says_a_loopback_link_before_its_qr(monkeypatch):
    """A join link that names 127.0.0.1 cannot be opened by a phone: the warning comes before the QR code (on a
    1280 x 720 projector the QR fills the screen and anything below it is out of sight), in both languages."""
    from ui.strings.share import EN as SHARE_EN, ZH as SHARE_ZH

    monkeypatch.setenv("EXPLORER_PUBLIC_URL", "http://127.0.0.1:8501")
    for lang, said in (("en", SHARE_EN), ("zh", SHARE_ZH)):
        at = open_page(defaults=False, query={"ui.lang": lang}, lang=None)
        at.button(key="class.start").click().run()
        at.button(key="class.qr").click().run()
        assert not at.exception
        code = _seat(at).code
        dialog = next(e for e in _in_order(at._tree) if e.type == "dialog")
        drawn = _in_order(dialog)
        warning = said["share.qr_local"].format(host="127.0.0.1:8501").split("`")[0]
        w = [i for i, e in enumerate(drawn) if e.type == "warning" and warning in (e.value or "")]
        qr = [i for i, e in enumerate(drawn) if e.type == "html" and "share-qr-img" in (e.proto.body or "")
              and code in (e.proto.body or "").replace("<wbr>", "")]
        assert w and qr, [(e.type, str(getattr(e, "value", ""))[:40]) for e in drawn]
        assert w[0] < qr[0]
