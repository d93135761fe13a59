"""Class mode, the hooks explorer.py runs (through ``ui.teaching.teaching_hooks``): a join or lecturer link, the
lecturer's step written as the class's, and the reveal mirrored into the lecturer's lesson progress (its chart
opens). The session's seat (role, code, keys) is ``ui.teaching.class_mode``'s; students are on the phone page."""

from __future__ import annotations

from typing import Any

import sqlalchemy.exc
import streamlit as st

from teaching import course, lessons as lesson_files
from teaching.classroom import ClassError, StepMoved, StoreUnavailable
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.i18n import t
from ui.teaching.class_mode import (
    PARAM_CODE, PARAM_SECRET, adopt, class_state, clean_code, code, enter_from_link, error_text, forget,
    leave_class, role, say, seat, store_down,
)


# ---- the hooks app.py calls ------------------------------------------------------------------------------
def class_hook(pages: dict[str, Any], here: str) -> None:
    """explorer.py, after the navigation is built, before the lesson hook: a link's class (the lecturer's link or
    cookie; a join link goes to the phone page); a lecturer session takes the class's step when another of the
    lecturer's sessions moved it."""
    secret = st.query_params.get(PARAM_SECRET)
    if secret is not None:
        del st.query_params[PARAM_SECRET]  # never left in the address bar, the history or a shared link
    raw = st.query_params.get(PARAM_CODE)
    if raw and (role() is None or clean_code(raw) != code()):
        enter_from_link(raw, secret)
    elif secret is not None and not raw:
        say(t("class.err.bad_code"))
    if role() is None:
        return
    if st.query_params.get(PARAM_CODE) != code():
        st.query_params[PARAM_CODE] = code()  # a reload (or a restarted server) comes back to the class
    if role() == "lecturer":
        secret = seat().secret
        try:
            if seat().verified != secret:  # the store checks the secret, not the session
                store().check_lecturer(code(), secret)
                seat().verified = secret
            state = class_state(code(), fresh=True)
        except StoreUnavailable as err:
            store_down(err, code())
            return
        except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
            leave_class(error_text(err, code()))
            return
        if state["step_seq"] != seat().synced_seq:
            adopt(state)


def step_of(step: dict):
    """The lesson and its step a class step names (None for a poll, a page, a summary)."""
    lesson = lesson_files.by_id(step.get("lesson", "")) if step.get("kind") == "lesson" else None
    if lesson is None or not 1 <= int(step.get("step", 0)) <= len(lesson.steps):
        return None
    return lesson, lesson.step(int(step["step"]))


def _mirror(step: dict, state: dict) -> None:
    """The class's reveal, in the lecturer's lesson progress: nothing recorded while the question is open (the
    chart waits, "predict first"), "skipped" once revealed (the chart opens with its highlight)."""
    found = step_of(step)
    if not found or found[1].question is None:
        return
    lesson, s = found
    answers = lesson_ui.progress(lesson.id).answers
    if not state["revealed"]:
        answers.pop(str(s.number), None)
        return
    if str(s.number) in answers:
        return
    answers[str(s.number)] = {"picked": None, "right": False, "skipped": True, "text": None}


def _lecturer_step(here: str) -> dict:
    """The step the lecturer's screen shows: the open poll, else the lesson step, else the page."""
    poll = seat().poll
    if poll:
        return poll
    a = lesson_ui.active()
    if a:
        lesson, n = a
        s = lesson.step(n) if n <= len(lesson.steps) else None  # None: the lesson's summary
        return {"kind": "lesson", "lesson": lesson.id, "step": n, "page": s.page if s else course.LESSONS_PAGE,
                "question": f"{lesson.id}:{n}" if s and s.question else None}
    return {"kind": "page", "page": here}


def class_sync(here: str) -> None:
    """explorer.py, after the lesson hook: the lecturer's step becomes the class's (only when it changed: a reload
    keeps the reveal); the reveal mirrored into the lecturer's lesson progress.

    The move is a compare-and-set from the class's step this session last took (``ClassSeat.synced_seq``): when
    another tab or device of the lecturer moved the class since (two tabs clicking at once), this session takes the
    class's step instead of writing its own over it."""
    if role() != "lecturer":
        return
    c, secret = code(), seat().secret
    try:
        state = class_state(c, fresh=True)
        if state["ended"]:
            leave_class(t("class.ended_lecturer", code=md(c)))
            return
        want = _lecturer_step(here)
        if state["step"] != want:
            try:
                seat().synced_seq = store().set_step(c, secret, want, expect_seq=seat().synced_seq)
            except StepMoved:
                forget(c)
                adopt(class_state(c, fresh=True))
                st.rerun()  # the class's step, its page and settings, from the top
            forget(c)
            state = class_state(c, fresh=True)
    except StoreUnavailable as err:
        store_down(err, c)
        return
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        leave_class(error_text(err, c))
        return
    seat().drew_revealed = state["revealed"]  # another tab's reveal reruns this one (lecturer_live)
    _mirror(state["step"] or {}, state)


