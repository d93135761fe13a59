"""A lesson step is a pure function of its declaration: reached by its link, by Next, by Back or after "Start
again", with the learner's own slider moves in between, every control holds what the step declares (its settings
over the preset and the app's defaults) and every control it does not declare holds its own default, as in a fresh
session opened by the step's link. The reference is the declaration (``ui.teaching.steps.step_values``), not another run.

Lesson 1 is walked (steps 8-10 share the loss page: steps 8 and 9 declare the prompt length and not
``loss.keep``, step 10 declares ``loss.keep = 3`` and not the prompt length; step 7 declares neither).
"""

from __future__ import annotations

import pytest

from teaching import lessons
from tests.lesson_scan import open_step
from ui.teaching.steps import step_values
from ui.state import DEFAULTS_KEY, FIXED_KEY, SESSION_CONTROLS
from teaching.course import Pointer
from ui.teaching.steps import SEAT_KEY

LESSON = "minimind_block"
PAGES = dict(lessons._pages_list())


def _click(at, key: str):
    [b] = [b for b in at.button if str(b.key) == key]
    at = b.click().run()
    # AppTest starts every run from the page and address it was opened with, also after the app switched pages;
    # a browser's address bar follows the switch (tests/browser/test_browser_lessons.py walks it there)
    a = at.session_state[SEAT_KEY].active if SEAT_KEY in at.session_state else None
    at.query_params.pop("lesson", None)
    at.query_params.pop("step", None)
    if a:
        at.query_params.update({"lesson": a.lesson, "step": str(a.step)})
        at.switch_page(PAGES[at.session_state["state.page"]])
    return at


def _assert_declared(at, n: int, how: str) -> None:
    lesson = lessons.by_id(LESSON)
    assert not at.exception, at.exception[0].value
    ss = at.session_state
    assert ss[SEAT_KEY].active == Pointer(LESSON, n), how
    declared, fixed = step_values(lesson.step(n))
    drawn = ss[DEFAULTS_KEY]  # {control: its own default} of every control drawn in this session
    wrong = {}
    for key, default in drawn.items():
        if key.startswith(SESSION_CONTROLS) or key not in ss:
            continue
        want = declared.get(key, default)
        if ss[key] != want:
            wrong[key] = (ss[key], want)
    assert not wrong, f"step {n} reached {how}: (holds, declares) {wrong}"
    assert (ss[FIXED_KEY] if FIXED_KEY in ss else {}) == fixed, how


@pytest.fixture(scope="module")
def walk():
    return open_step(LESSON, 7, "en", PAGES["overview"])


def test_next_back_and_start_again_give_each_step_its_declared_settings(walk):
    at = walk
    _assert_declared(at, 7, "by its link")
    at = _click(at, "lessons.next")
    _assert_declared(at, 8, "by Next")
    at.slider(key="loss.prompt_len").set_value(4).run()  # the learner explores: a value no step declares
    at = _click(at, "lessons.next")
    _assert_declared(at, 9, "by Next after moving a slider")
    assert at.session_state["loss.prompt_len"] == 2
    at = _click(at, "lessons.next")
    _assert_declared(at, 10, "by Next")  # the prompt length is back to its default, not step 9's 2
    assert at.session_state["loss.keep"] == 3
    at = _click(at, "lessons.back")
    _assert_declared(at, 9, "by Back")  # logits_to_keep is back to its default, not step 10's 3
    at = _click(at, "lessons.back")
    _assert_declared(at, 8, "by Back")
    at = _click(at, "lessons.next")
    at.slider(key="loss.prompt_len").set_value(5).run()
    at = _click(at, "lessons.leave")
    at.switch_page(PAGES["lessons"]).run()  # the lesson list: "Start again", then Next up to step 10
    at = _click(at, f"lessons.again.{LESSON}")
    _assert_declared(at, 1, "after Start again")
    for n in range(2, 11):
        at = _click(at, "lessons.next")
        _assert_declared(at, n, "by Next after Start again")
    assert at.session_state["loss.prompt_len"] == 0 and at.session_state["loss.keep"] == 3
