"""The learner's place in a lesson: the open step, progress, entering a step (its settings), the frozen answer key.
The banner above a step's page is ``ui.teaching.lesson_banner``; the gate that hides charts, ``ui.teaching.gate``.

A lesson (``teaching/lessons/*.toml``, loaded by ``teaching.lessons``) is a list of steps; the session's place in it is
``seat().active = Pointer(id, n)`` (n = 1..N; N + 1 = the summary on the Lessons page; one typed
:class:`LessonSeat` under one session key), and the answers given are in ``seat().progress`` (also kept in a
session cookie, so a reload of the tab restores them). Entering a step applies its settings through the same repairs a link uses (``ui.state.repair``: the
values are written before any widget of the next run is drawn) and switches to the step's page.

The address bar carries ``?lesson=<id>&step=<n>``: a link opens that step, and the browser's back button (which
reruns the app with the previous address) goes back to the step that address names. While a question is open,
the chart it is about is replaced by a "predict first" placeholder (``ui.teaching.gate.chart_gate``, called by
``ui.widgets.chart``); after the answer it is drawn with the relevant part highlighted. The answer key of a step
is computed once per step settings (:func:`frozen_key`) on the very model the page shows.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import streamlit as st

from teaching import course, lessons as lesson_files
from teaching.course import Pointer
from teaching.lessons import Key, Lesson, Step, settings_digest
from settings.build import sidebar_values
from ui.caches.steps import step_key
from ui.checkpoint_picker import TRAINED_KEY
from ui.compare import compare_with, stop as stop_comparing
from ui.train_common import JOB_KEY, RACE_KEY
from ui.state import (FIXED_KEY, apply_pending, current, page_controls_at_default, register_params, repair,
                      set_controls)

SEAT_KEY = "lessons.seat"  # this session's LessonSeat: its place in a lesson and its progress, under one key
COOKIE = "explorer_lessons"
PARAMS = ("lesson", "step")
register_params(*PARAMS)  # known link parameters (ui/state.py), not a control's


# ---- state ------------------------------------------------------------------------------------------------
@dataclass
class Progress:
    """One lesson's progress in this session (kept in the tab's cookie as JSON: :func:`save_cookie`)."""

    step: int = 0  # the furthest step reached
    answers: dict[str, dict] = field(default_factory=dict)  # {"n": {"picked", "right", "skipped"}}: the records
    done: bool = False  # the summary was reached (the Lessons page says so)

    @classmethod
    def of(cls, raw: Any) -> Progress | None:
        """From the cookie's JSON object (None when it is not one of ours)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("answers"), dict):
            return None
        answers = {str(k): v for k, v in raw["answers"].items() if isinstance(v, dict)}
        try:
            return cls(int(raw.get("step", 0)), answers, bool(raw.get("done", False)))
        except (TypeError, ValueError):
            return None


@dataclass
class LessonSeat:
    """This session's place in the lessons (one typed object in ``st.session_state[SEAT_KEY]``, see :func:`seat`)."""

    active: Pointer | None = None  # the open lesson and step (N + 1: its summary), or None
    prev: Pointer | None = None  # the step shown before the current one (the back button's target, see lesson_hook)
    moved: bool = False  # set by a button: this run's step is the session's, not the address bar's
    progress: dict[str, Progress] | None = None  # {lesson id: Progress}; None until the cookie was read
    saved: str | None = None  # the progress as last written to the cookie
    ran: bool = False  # the lesson hook ran in this session before (a link's first run carries its values along)
    history: bool = False  # the script that keeps one browser history entry per step was sent (lesson_banner)
    shown: set = field(default_factory=set)  # {(lesson id, n)}: revealed charts already scrolled into view
    topped: tuple | None = None  # (lesson id, n): the step whose first screen was last scrolled to (lesson_banner)


def seat() -> LessonSeat:
    """This session's :class:`LessonSeat` (made on first use)."""
    found = st.session_state.get(SEAT_KEY)
    if found is None:
        found = st.session_state[SEAT_KEY] = LessonSeat()
    return found


def active() -> tuple[Lesson, int] | None:
    """The open lesson and step number (N + 1 = its summary), or None."""
    a = seat().active
    lesson = lesson_files.by_id(a.lesson) if a else None
    return (lesson, a.step) if lesson else None


def active_step(page: str | None = None) -> tuple[Lesson, Step] | None:
    """The open step, when the page drawn (``page``: this run's url path, default the current) is its page."""
    a = active()
    if not a or a[1] > len(a[0].steps):
        return None
    step = a[0].step(a[1])
    here = page if page is not None else st.session_state.get("state.page", "")
    return (a[0], step) if step.page == here else None


def progress(lesson_id: str) -> Progress:
    s = seat()
    if s.progress is None:
        s.progress = {}
    return s.progress.setdefault(lesson_id, Progress())


def answered(lesson: Lesson, step: Step) -> dict | None:
    return progress(lesson.id).answers.get(str(step.number))


def score(lesson: Lesson) -> tuple[int, int]:
    answers = progress(lesson.id).answers
    right = sum(1 for s in lesson.steps if s.question and answers.get(str(s.number), {}).get("right"))
    return right, lesson.questions


def restore_from_cookie() -> None:
    """First run of a session (a reload): take the progress the tab's session cookie kept."""
    s = seat()
    if s.progress is not None:
        return
    try:
        raw = st.context.cookies.get(COOKIE)
        saved = json.loads(unquote(raw)) if raw else {}  # written URL-encoded by save_cookie
    except (ValueError, TypeError, AttributeError):
        saved = {}
    kept = {k: Progress.of(v) for k, v in saved.items()} if isinstance(saved, dict) else {}
    s.progress = {k: v for k, v in kept.items() if v is not None}


def save_cookie() -> None:
    """Keep the progress in a session cookie (gone when the browser closes): a reload restores it."""
    s = seat()
    data = json.dumps({k: asdict(v) for k, v in (s.progress or {}).items()}, separators=(",", ":"))
    if s.saved == data:
        return
    s.saved = data
    st.html(f"<script>document.cookie = '{COOKIE}=' + {json.dumps(quote(data))} + '; path=/; SameSite=Lax';</script>",
            unsafe_allow_javascript=True)


# ---- entering a step --------------------------------------------------------------------------------------------
def step_values(step: Step) -> tuple[dict, dict]:
    """``(control values, fixed config fields)`` the step sets: every sidebar control (the app's default unless the
    preset or the step names it) and the step's page controls."""
    values, fixed = sidebar_values(step.settings)
    values["cfg.seed"] = float(values["cfg.seed"])  # the seed is a float number input (ui/sidebar.py)
    return values, fixed


def apply_settings(step: Step) -> None:
    """Write the step's settings as repairs: applied before any widget of the next run (or of this one, when no
    widget has been drawn yet: :func:`lesson_hook` applies them at once)."""
    values, fixed = step_values(step)
    page_controls_at_default(keep=set(values))  # a step is its declaration: nothing of the step before stays
    stop_comparing()  # a step is its own view (or its own two): no second side from before it
    set_controls(values)
    if fixed:
        repair(FIXED_KEY, fixed)
    else:
        st.session_state.pop(FIXED_KEY, None)
    if step.compare:  # the step compares: its B waits beside A (the sidebar's)
        compare_with(*sidebar_values(step.compare))


def go(lesson_id: str, n: int) -> None:
    """Open step ``n`` of a lesson (a button's callback): its settings, its page on the next run."""
    lesson = lesson_files.by_id(lesson_id)
    if lesson is None:
        return
    n = min(max(1, int(n)), len(lesson.steps) + 1)
    s = seat()
    s.prev, s.active, s.moved = s.active, Pointer(lesson.id, n), True
    p = progress(lesson.id)
    p.step = max(p.step, min(n, len(lesson.steps)))
    if n > len(lesson.steps):
        p.done = True  # the summary was reached: the list says so
    if n <= len(lesson.steps):
        apply_settings(lesson.step(n))


def leave() -> None:
    s = seat()
    s.active, s.moved = None, True


def restart(lesson_id: str) -> None:
    progress(lesson_id)  # the progress is read (from the cookie) before it is reset
    seat().progress.pop(lesson_id, None)
    go(lesson_id, 1)


def _url_step() -> Pointer | None:
    raw_id, raw_n = st.query_params.get("lesson"), st.query_params.get("step")
    if not raw_id or lesson_files.by_id(raw_id) is None:
        return None
    try:
        return Pointer(raw_id, int(raw_n or 1))
    except ValueError:
        return Pointer(raw_id, 1)


def lesson_hook(pages: dict[str, Any], here: str) -> None:
    """app.py, after the navigation is built and before the page runs: follow the address bar (a link, the back
    button) or the session (a button), switch to the step's page, and keep ``lesson``/``step`` in the address.
    What moves where is decided by ``teaching.course.lesson_move``; this carries it out."""
    restore_from_cookie()
    s = seat()
    first, s.ran = not s.ran, True
    moved, s.moved = s.moved, False
    move = course.lesson_move(s.active, _url_step(), s.prev, moved, here)
    if move.go is not None:
        go(move.go.lesson, move.go.step)  # a link or the browser's back/forward button: that step, its settings
        s.moved = False
        apply_pending()  # no widget is drawn yet in this run
    if move.clear_address:
        for p in PARAMS:
            if p in st.query_params:
                del st.query_params[p]
    if move.page is not None and move.page in pages:
        at = s.active
        params = {"lesson": at.lesson, "step": str(at.step)}
        if first:  # a link's other values (language, presenter mode) go along: no widget has bound them yet
            params = {**st.query_params.to_dict(), **params}
        # later only the lesson's own (Streamlit refuses bound ones): the controls write theirs as they are drawn
        st.switch_page(pages[move.page], query_params=params)
    at = move.address
    if at is not None and (st.query_params.get("lesson") != at.lesson or st.query_params.get("step") != str(at.step)):
        st.query_params["lesson"] = at.lesson
        st.query_params["step"] = str(at.step)


# ---- the answer key ---------------------------------------------------------------------------------------
# The Training lab's jobs in the session: the lab's lesson asks about the run on screen
# (teaching/answers/training.py), named as the answer functions read them.
RUN_JOBS = {"train.job": JOB_KEY, "race.job": RACE_KEY}


def finished_runs() -> dict:
    """``{"train.job": job | None, "race.job": job | None}``: the session's training run and race when they ended
    with at least one step and no error (an answer function raises ``NeedsRun`` on None)."""
    out = {}
    for name, state_key in RUN_JOBS.items():
        job = st.session_state.get(state_key)
        res = getattr(job, "result", None)
        steps = getattr(res, "steps_done", None) if name == "train.job" else getattr(getattr(res, "post", None),
                                                                                   "steps_done", None)
        out[name] = job if job is not None and job.done and job.error is None and steps else None
    return out


def frozen_key(lesson: Lesson, step: Step) -> Key:
    """The step's key; raises ``NeedsRun`` on the Training lab while the run it is about has not finished."""
    trained = st.session_state.get(TRAINED_KEY) if step.settings.get("model.source") == "trained" else None
    session: dict = {"trained": trained} if trained else {}
    runs: tuple = ()
    if step.page == "train":
        done = finished_runs()
        session.update(done)
        runs = tuple((k, getattr(j, "id", None)) for k, j in done.items())
    return step_key(lesson.id, step.number, settings_digest(step.settings), trained["id"] if trained else None,
                    runs, session)


def drifted(step: Step) -> list[str]:
    """The controls whose value is no longer the step's (the learner moved a slider mid-question)."""
    values, _ = step_values(step)
    source = values.get("model.source", "random")
    out = []
    for key, want in values.items():
        if source == "checkpoint" and key.startswith("cfg."):
            continue
        if key.startswith("input.") and key not in ("input.mode",) and (
                (values["input.mode"] == "random") != (key == "input.random_len")):
            continue
        if key == "model.checkpoint" and source != "checkpoint":
            continue
        have = current(key, want)
        if have != want and not (isinstance(want, (int, float)) and isinstance(have, (int, float)) and float(have) == float(want)):
            out.append(key)
    return out


