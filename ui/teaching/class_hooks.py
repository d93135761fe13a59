"""Class mode, the hooks app.py runs (through ``ui.teaching.teaching_hooks``): a join or lecturer link, a
following student's session taking the class's step, the lecturer's step written as the class's, and the reveal
mirrored into the lesson progress. The session's seat (role, code, keys) is ``ui.teaching.class_mode``'s."""

from __future__ import annotations

from typing import Any

import sqlalchemy.exc
import streamlit as st

from teaching import course, lessons as lesson_files
from teaching.classroom import (
    ClassEnded,
    ClassError,
    ClassExpired,
    StepMoved,
    StoreUnavailable,
)
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.i18n import t
from ui.state import apply_pending
from ui.teaching.class_mode import (
    PARAM_CODE, PARAM_SECRET, adopt, class_state, clean_code, code, enter_from_link, error_text, forget,
    leave_class, role, say, seat, store_down, student_id,
)


# ---- the hooks app.py calls ------------------------------------------------------------------------------
def class_hook(pages: dict[str, Any], here: str) -> None:
    """app.py, after the navigation is built, before the lesson hook: a link's class (join, or the lecturer's
    link); a following student's session opens the class's step (the lesson hook then switches to its page)."""
    secret = st.query_params.get(PARAM_SECRET)
    if secret is not None:
        del st.query_params[PARAM_SECRET]  # never left in the address bar, the history or a shared link
    raw = st.query_params.get(PARAM_CODE)
    if raw and (role() is None or clean_code(raw) != code() or (secret and role() == "student")):
        enter_from_link(raw, secret)
    elif secret is not None and not raw:
        say(t("class.err.bad_code"))
    if role() is None:
        return
    if st.query_params.get(PARAM_CODE) != code():
        st.query_params[PARAM_CODE] = code()  # a reload (or a restarted server) comes back to the class
    if role() == "student" and seat().following:
        _follow(pages, here)
    elif role() == "lecturer":
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


def _follow(pages: dict[str, Any], here: str) -> None:
    first = not seat().ran
    seat().ran = True
    try:
        state = class_state(code())
    except StoreUnavailable as err:
        store_down(err, code())
        return
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        leave_class(t("class.ended", code=md(code())) if isinstance(err, (ClassEnded, ClassExpired))
                    else error_text(err, code()))
        return
    if state["ended"]:
        leave_class(t("class.ended", code=md(code())))
        return
    # seen only once a run draws it: a run cut short (a page switch, a loaded server) leaves the live bar to rerun
    seat().applied = (state["step_seq"], state["revealed"], state["ended"])
    step = state["step"] or {}
    move = course.class_move(step, lesson_ui.seat().active, here)
    if move.go is not None:
        lesson_ui.go(move.go.lesson, move.go.step)  # the lesson hook then switches to the step's page
        apply_pending()  # the step's settings, before any widget of this run
    if step.get("kind") == "lesson" and lesson_files.by_id(step.get("lesson", "")) is not None:
        _mirror(step, state)
        return
    if move.leave:
        lesson_ui.leave()  # the lecturer left the lesson (a poll keeps it: its open question's chart stays hidden)
    if move.page is not None and move.page in pages:
        params = {PARAM_CODE: code()}
        if first:  # the link's other values (its language) go along: no widget has bound them yet
            params = {**st.query_params.to_dict(), **params}
        st.switch_page(pages[move.page], query_params=params)


def step_of(step: dict):
    """The lesson and its step a class step names (None for a poll, a page, a summary)."""
    lesson = lesson_files.by_id(step.get("lesson", "")) if step.get("kind") == "lesson" else None
    if lesson is None or not 1 <= int(step.get("step", 0)) <= len(lesson.steps):
        return None
    return lesson, lesson.step(int(step["step"]))


def _mirror(step: dict, state: dict) -> None:
    """The class's reveal, in this session's lesson progress: nothing recorded while the question is open (the
    chart waits, "predict first"), the stored answer (graded) or "skipped" (the lecturer) once revealed."""
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
    mine = my_answer(state) if role() == "student" else None
    try:
        right = mine is not None and lesson_ui.frozen_key(lesson, s).grade(s.question, mine)
    except Exception:  # noqa: BLE001 -- a key that cannot be computed: the banner says so
        right = False
    answers[str(s.number)] = {"picked": mine, "right": bool(right), "skipped": mine is None, "text": None}


def my_answer(state: dict) -> Any:
    """This student's stored answer to the open question (read once per question; a reload reads it again)."""
    q = state.get("question")
    if not q:
        return None
    mine = seat().mine
    if q not in mine:
        try:
            mine[q] = store().my_answer(code(), student_id(), q)
        except (ClassError, sqlalchemy.exc.SQLAlchemyError):
            return None
    return mine[q]


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
    """app.py, after the lesson hook: the lecturer's step becomes the class's (only when it changed: a reload
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


