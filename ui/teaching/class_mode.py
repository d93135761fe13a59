"""Class mode: the room joins from their phones, follows the lecturer's lesson step, answers, and sees the reveal.

One mechanism: **the lecturer's step is the class's step.** The lecturer opens a lesson (or a quick poll, or just
a page) as usual; :func:`class_sync` writes that step to the class store (``classroom.ClassStore``: SQLite by
default, PostgreSQL through ``EXPLORER_CLASS_DB``) whenever it differs from the stored one. A following student's
session reads the stored state (a ``st.fragment`` that reruns every :data:`FOLLOW_EVERY_S` seconds and only asks
for a whole-app rerun when the step, the reveal or the end changed) and :func:`class_hook` opens that step with
the lessons' own ``go`` (its settings, its page). The step's charts and answer key are the lesson's cached ones,
so a class computes each step once and a late joiner gets it at once.

A class step's question is answered into the store, not into the session's lesson progress, so the lesson's chart
stays hidden ("predict first") until the lecturer reveals; the reveal then writes the student's stored answer into
the lesson progress (graded from the same key), which opens the chart with its highlight for everyone. A reveal is
its question's for good (the store's ``reveals``): a quick poll, Back, or a second lecturer tab coming back to a
revealed question finds it revealed, and the store refuses a changed answer to it, whatever sent the request.

Who is who: the lecturer's secret (made with the class) lives in the lecturer's session and in a cookie of the
lecturer's browser (so a reload or a server restart keeps the role) and travels only in the private lecturer link
(``?class=CODE&lecturer=SECRET``, removed from the address bar at once). Every control action hands the session's
secret to the store, which checks it: a student's session has none. A student is a random id kept in a cookie
(``explorer_student``), so a reload, a lost network or a restarted server rejoins with the answers kept.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from typing import Any
from urllib.parse import quote, unquote

import sqlalchemy.exc
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from teaching import lessons as lesson_files
from teaching.classroom.tables import choice_table, estimate_table, summary
from teaching.classroom import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_NICKNAME,
    AnswerClosed,
    BadInput,
    ClassEnded,
    ClassError,
    ClassExpired,
    ClassFull,
    NotJoined,
    NotLecturer,
    StepMoved,
    UnknownClass,
    new_student_id,
)
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.teaching.class_figures import distribution_bar
from ui.format import significant
from ui.i18n import current_lang, t
from ui.share import is_local, qr_code, qr_html
from ui.state import apply_pending

ROLE_KEY = "class.role"  # "lecturer" or "student" (absent: not in a class)
CODE_KEY = "class.code_joined"
SECRET_KEY = "class._secret"  # the lecturer's secret (never sent to a browser but the lecturer's own)
STUDENT_KEY = "class._student_id"
FOLLOW_KEY = "class._following"
SEEN_KEY = "class._seen"  # (step_seq, revealed, ended) this session last drew (its live bar reruns the app on news)
APPLIED_KEY = "class._applied"  # ... that this run took: drawn, and so seen, once the run reaches the banner
POLL_KEY = "class._poll"  # the lecturer's open quick poll (a step)
MINE_KEY = "class._mine"  # {question id: this student's answer}
MSG_KEY = "class._messages"
RATE_KEY = "class._rate"
SHOW_KEY = "class._show_answers"  # the lecturer's choice: the answers' chart on screen before the reveal
SYNCED_KEY = "class._synced_seq"  # the lecturer session: the class's step_seq it last wrote or took
DREW_REVEAL_KEY = "class._drew_revealed"  # the lecturer session: whether its last whole run drew the reveal
PAGE_KEY = "class._page"  # the page (its script hash) this session's last whole run drew
DRAWN_KEY = "class._drawn"  # what a following student's last whole run drew: its page's path, its question box
MESSAGE_S = 12.0
APP_RERUN_KEY = "class._app_rerun"  # a button in the lecturer's fragment asks for a whole-app rerun
PARAM_CODE, PARAM_SECRET = "class", "lecturer"
ROOT_PAGES = ("", "home")  # app.py's hidden default page (its url path reads "" at "/"): a join link opens it
COOKIE_STUDENT = "explorer_student"
COOKIE_LECTURER = "explorer_lecturer"
ENV_PUBLIC_URL = "EXPLORER_PUBLIC_URL"
FOLLOW_EVERY_S = 1.5  # a student's page follows the lecturer's step within this (+ the state cache's age)
LECTURER_EVERY_S = 1.0  # the lecturer's counts refresh
STATE_TTL_S = 0.5  # one read of a class's state per process and this interval, shared by its sessions
MAX_POLL_OPTIONS = 6
MAX_POLL_TEXT = 120
# actions a session may take in a window (a student mashing buttons, a script forging reruns)
RATES = {"answer": (12, 10.0), "join": (8, 60.0), "lecturer": (8, 60.0), "control": (30, 10.0)}


# ---- the store, and its state shared by a process's sessions ------------------------------------------------
_states: dict[str, tuple[float, dict]] = {}
_states_lock = threading.Lock()


def class_state(code: str, fresh: bool = False) -> dict:
    """The class's state, read at most once per :data:`STATE_TTL_S` by this process (``fresh``: read now).
    Raises the store's :class:`~classroom.ClassError`."""
    now = time.monotonic()
    with _states_lock:
        hit = _states.get(code)
    if hit and not fresh and now - hit[0] < STATE_TTL_S:
        return hit[1]
    state = store().state(code)
    with _states_lock:
        _states[code] = (now, state)
        if len(_states) > 1000:  # old classes' entries
            for k in [k for k, (at, _) in _states.items() if now - at > 60]:
                _states.pop(k, None)
    return state


def _forget(code: str) -> None:
    with _states_lock:
        _states.pop(code, None)


# ---- session helpers -------------------------------------------------------------------------------------
def role() -> str | None:
    return st.session_state.get(ROLE_KEY)


def code() -> str | None:
    return st.session_state.get(CODE_KEY)


def _say(text: str) -> None:
    """A message for this session, shown above the page for :data:`MESSAGE_S` seconds (a link's run is followed at
    once by others: the language, the lesson's settings)."""
    msgs = st.session_state.setdefault(MSG_KEY, {})
    msgs[text] = time.monotonic() + MESSAGE_S


def _allow(kind: str) -> bool:
    """Whether this session may take one more ``kind`` action now (a sliding window, :data:`RATES`)."""
    limit, window = RATES[kind]
    now = time.monotonic()
    times = [x for x in st.session_state.setdefault(RATE_KEY, {}).get(kind, []) if now - x < window]
    if len(times) >= limit:
        st.session_state[RATE_KEY][kind] = times
        _say(t("class.err.too_fast"))
        return False
    st.session_state[RATE_KEY][kind] = [*times, now]
    return True


def _error_text(err: Exception, class_code: str) -> str:
    c = md(class_code or "")
    if isinstance(err, UnknownClass):
        return t("class.err.unknown", code=c)
    if isinstance(err, ClassExpired):
        return t("class.err.expired", code=c)
    if isinstance(err, ClassEnded):
        return t("class.err.ended", code=c)
    if isinstance(err, ClassFull):
        return t("class.err.full", code=c)
    if isinstance(err, NotLecturer):
        return t("class.err.not_lecturer_action", code=c)
    if isinstance(err, AnswerClosed):
        return t("class.err.closed")
    if isinstance(err, BadInput):
        return t("class.err.bad_input", error=md(str(err)))
    return t("class.err.store", error=md(type(err).__name__))


def clean_code(raw: Any) -> str | None:
    """A typed or linked code in upper case without spaces, or None if it cannot be one."""
    if not isinstance(raw, str):
        return None
    c = raw.strip().replace(" ", "").replace("-", "").upper()
    return c if len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) else None


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # noqa: BLE001 -- outside a browser (AppTest)
        return None
    return unquote(value) if isinstance(value, str) else None  # written URL-encoded by _cookie_js


def _cookie_js(name: str, value: str, max_age: int = 13 * 3600) -> str:
    return (f"<script>document.cookie = '{name}=' + {quote(value)!r} + '; path=/; max-age={max_age}; "
            f"SameSite=Lax';</script>")


def student_id() -> str:
    """This browser's random student id (kept in a cookie: a reload or a restarted server rejoins as the same)."""
    sid = st.session_state.get(STUDENT_KEY)
    if sid is None:
        sid = _cookie(COOKIE_STUDENT)
        if not sid or not 8 <= len(sid) <= 64 or not all(ch.isalnum() or ch in "-_" for ch in sid):
            sid = new_student_id()
        st.session_state[STUDENT_KEY] = sid  # written to the cookie by class_hook (in the script, not a callback)
    return sid


def _lecturer_cookie() -> tuple[str, str] | None:
    raw = _cookie(COOKIE_LECTURER)
    if not raw or ":" not in raw:
        return None
    c, _, secret = raw.partition(":")
    return (c, secret) if clean_code(c) and secret else None


# ---- joining, starting, leaving ------------------------------------------------------------------------------
def start_class() -> None:
    """The "Start a class" button: a new class, this session its lecturer."""
    if not _allow("control"):
        return
    try:
        new_code, secret = store().create_class()
    except sqlalchemy.exc.SQLAlchemyError as err:
        _say(_error_text(err, ""))
        return
    _become_lecturer(new_code, secret, new=True)


def _become_lecturer(class_code: str, secret: str, new: bool = False) -> None:
    """This session is the class's lecturer. A new class takes the lecturer's screen as its first step; an
    existing one (a lecturer link, a reload, a restart) is taken where it is (:func:`_adopt`)."""
    st.session_state.update({ROLE_KEY: "lecturer", CODE_KEY: class_code, SECRET_KEY: secret})
    for key in (FOLLOW_KEY, POLL_KEY, SYNCED_KEY):
        st.session_state.pop(key, None)
    if new:
        st.session_state[SYNCED_KEY] = 0
    st.session_state["class._set_cookie"] = f"{class_code}:{secret}"


def _adopt(state: dict) -> None:
    """A lecturer session takes the class's step when another session moved it (a second device of the lecturer,
    a reload, a restart): its poll, or its lesson step (settings and page, through the lessons' ``go``)."""
    st.session_state[SYNCED_KEY] = state["step_seq"]
    step = state["step"] or {}
    if step.get("kind") == "poll":
        st.session_state[POLL_KEY] = step
        return
    st.session_state.pop(POLL_KEY, None)
    if step.get("kind") == "lesson" and lesson_files.by_id(step.get("lesson", "")):
        if st.session_state.get(lesson_ui.ACTIVE_KEY) != {"lesson": step["lesson"], "step": step["step"]}:
            lesson_ui.go(step["lesson"], step["step"])
            apply_pending()


def join_class(raw_code: Any, nickname: str | None = None) -> bool:
    """Join as a student (the join form, a link). False with a message when the code is bad or the class gone."""
    c = clean_code(raw_code)
    if c is None:
        _say(t("class.err.bad_code"))
        return False
    if not _allow("join"):
        return False
    try:
        store().join(c, student_id(), nickname)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        _say(_error_text(err, c))
        return False
    st.session_state.update({ROLE_KEY: "student", CODE_KEY: c, FOLLOW_KEY: True, "class._close_sidebar": True})
    st.session_state.pop(SEEN_KEY, None)
    st.session_state.pop(SECRET_KEY, None)
    return True


def _join_form() -> None:
    """The join form's button (a callback: the session joins before the next run draws anything)."""
    nick = (st.session_state.get("class.nickname") or "").strip()[:MAX_NICKNAME] or None
    join_class(st.session_state.get("class.join_code"), nick)


def leave_class(message: str | None = None) -> None:
    for key in (ROLE_KEY, CODE_KEY, SECRET_KEY, FOLLOW_KEY, SEEN_KEY, APPLIED_KEY, POLL_KEY, MINE_KEY, SYNCED_KEY,
                DREW_REVEAL_KEY, PAGE_KEY, DRAWN_KEY, "class._verified"):
        st.session_state.pop(key, None)
    if message:
        _say(message)
    if PARAM_CODE in st.query_params:
        del st.query_params[PARAM_CODE]


def _enter_from_link(raw_code: str, secret: str | None) -> None:
    """A link's ``?class=`` (and perhaps ``&lecturer=``), or a reload's: the lecturer (a valid secret from the
    link or this browser's cookie) or a student."""
    c = clean_code(raw_code)
    if c is None:
        _say(t("class.err.bad_code"))
        del st.query_params[PARAM_CODE]
        return
    from_link = secret is not None
    saved = _lecturer_cookie()
    if secret is None and saved and saved[0] == c:
        secret = saved[1]
    if secret is not None and (not from_link or _allow("lecturer")):
        try:
            store().check_lecturer(c, secret)
            _become_lecturer(c, secret)
            return
        except NotLecturer:
            if from_link:
                _say(t("class.err.not_lecturer", code=md(c)))
        except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
            leave_class(_error_text(err, c))
            return
    if not join_class(c):
        if PARAM_CODE in st.query_params:
            del st.query_params[PARAM_CODE]


# ---- the hooks app.py calls ------------------------------------------------------------------------------
def class_hook(pages: dict[str, Any], here: str) -> None:
    """app.py, after the navigation is built, before the lesson hook: a link's class (join, or the lecturer's
    link); a following student's session opens the class's step (the lesson hook then switches to its page)."""
    secret = st.query_params.get(PARAM_SECRET)
    if secret is not None:
        del st.query_params[PARAM_SECRET]  # never left in the address bar, the history or a shared link
    raw = st.query_params.get(PARAM_CODE)
    if raw and (role() is None or clean_code(raw) != code() or (secret and role() == "student")):
        _enter_from_link(raw, secret)
    elif secret is not None and not raw:
        _say(t("class.err.bad_code"))
    if role() is None:
        return
    if st.query_params.get(PARAM_CODE) != code():
        st.query_params[PARAM_CODE] = code()  # a reload (or a restarted server) comes back to the class
    if role() == "student" and st.session_state.get(FOLLOW_KEY):
        _follow(pages, here)
    elif role() == "lecturer":
        secret = st.session_state.get(SECRET_KEY)
        try:
            if st.session_state.get("class._verified") != secret:  # the store checks the secret, not the session
                store().check_lecturer(code(), secret)
                st.session_state["class._verified"] = secret
            state = class_state(code(), fresh=True)
        except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
            leave_class(_error_text(err, code()))
            return
        if state["step_seq"] != st.session_state.get(SYNCED_KEY):
            _adopt(state)


def _follow(pages: dict[str, Any], here: str) -> None:
    first = not st.session_state.get("class._ran")
    st.session_state["class._ran"] = True
    try:
        state = class_state(code())
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        leave_class(t("class.ended", code=md(code())) if isinstance(err, (ClassEnded, ClassExpired))
                    else _error_text(err, code()))
        return
    if state["ended"]:
        leave_class(t("class.ended", code=md(code())))
        return
    # seen only once a run draws it: a run cut short (a page switch, a loaded server) leaves the live bar to rerun
    st.session_state[APPLIED_KEY] = (state["step_seq"], state["revealed"], state["ended"])
    step = state["step"] or {}
    kind = step.get("kind")
    if kind in ("lesson", "poll") and lesson_files.by_id(step.get("lesson", "")):
        # the lesson step (a poll names the one it interrupts): open here too, whatever happened to this session
        a = st.session_state.get(lesson_ui.ACTIVE_KEY)
        elsewhere = kind == "lesson" and step.get("page", here) != here
        if a != {"lesson": step["lesson"], "step": step["step"]} or elsewhere:
            lesson_ui.go(step["lesson"], step["step"])  # the lesson hook then switches to the step's page
            apply_pending()  # the step's settings, before any widget of this run
        if kind == "lesson":
            _mirror(step, state)
            return
    if kind == "page" and st.session_state.get(lesson_ui.ACTIVE_KEY):
        lesson_ui.leave()  # the lecturer left the lesson (a poll keeps it: its open question's chart stays hidden)
    page = step.get("page")
    if page and page != here and page in pages:
        params = {PARAM_CODE: code()}
        if first:  # the link's other values (its language) go along: no widget has bound them yet
            params = {**st.query_params.to_dict(), **params}
        st.switch_page(pages[page], query_params=params)


def _step_of(step: dict):
    """The lesson and its step a class step names (None for a poll, a page, a summary)."""
    lesson = lesson_files.by_id(step.get("lesson", "")) if step.get("kind") == "lesson" else None
    if lesson is None or not 1 <= int(step.get("step", 0)) <= len(lesson.steps):
        return None
    return lesson, lesson.step(int(step["step"]))


def _mirror(step: dict, state: dict) -> None:
    """The class's reveal, in this session's lesson progress: nothing recorded while the question is open (the
    chart waits, "predict first"), the stored answer (graded) or "skipped" (the lecturer) once revealed."""
    found = _step_of(step)
    if not found or found[1].question is None:
        return
    lesson, s = found
    answers = lesson_ui.progress(lesson.id)["answers"]
    if not state["revealed"]:
        answers.pop(str(s.number), None)
        return
    if str(s.number) in answers:
        return
    mine = _mine(state) if role() == "student" else None
    try:
        right = mine is not None and lesson_ui.frozen_key(lesson, s).grade(s.question, mine)
    except Exception:  # noqa: BLE001 -- a key that cannot be computed: the banner says so
        right = False
    answers[str(s.number)] = {"picked": mine, "right": bool(right), "skipped": mine is None, "text": None}


def _mine(state: dict) -> Any:
    """This student's stored answer to the open question (read once per question; a reload reads it again)."""
    q = state.get("question")
    if not q:
        return None
    mine = st.session_state.setdefault(MINE_KEY, {})
    if q not in mine:
        try:
            mine[q] = store().my_answer(code(), student_id(), q)
        except (ClassError, sqlalchemy.exc.SQLAlchemyError):
            return None
    return mine[q]


def _lecturer_step(here: str) -> dict:
    """The step the lecturer's screen shows: the open poll, else the lesson step, else the page."""
    poll = st.session_state.get(POLL_KEY)
    if poll:
        return poll
    a = lesson_ui.active()
    if a:
        lesson, n = a
        s = lesson.step(n) if n <= len(lesson.steps) else None  # None: the lesson's summary
        return {"kind": "lesson", "lesson": lesson.id, "step": n, "page": s.page if s else lesson_ui.LESSONS_PAGE,
                "question": f"{lesson.id}:{n}" if s and s.question else None}
    return {"kind": "page", "page": here}


def class_sync(here: str) -> None:
    """app.py, after the lesson hook: the lecturer's step becomes the class's (only when it changed: a reload
    keeps the reveal); the reveal mirrored into the lecturer's lesson progress.

    The move is a compare-and-set from the class's step this session last took (:data:`SYNCED_KEY`): when another
    tab or device of the lecturer moved the class since (two tabs clicking at once), this session takes the
    class's step instead of writing its own over it."""
    if role() != "lecturer":
        return
    c, secret = code(), st.session_state.get(SECRET_KEY)
    try:
        state = class_state(c, fresh=True)
        if state["ended"]:
            leave_class(t("class.ended_lecturer", code=md(c)))
            return
        want = _lecturer_step(here)
        if state["step"] != want:
            try:
                st.session_state[SYNCED_KEY] = store().set_step(c, secret, want,
                                                                expect_seq=st.session_state.get(SYNCED_KEY))
            except StepMoved:
                _forget(c)
                _adopt(class_state(c, fresh=True))
                st.rerun()  # the class's step, its page and settings, from the top
            _forget(c)
            state = class_state(c, fresh=True)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        leave_class(_error_text(err, c))
        return
    st.session_state[DREW_REVEAL_KEY] = state["revealed"]  # another tab's reveal reruns this one (_lecturer_live)
    _mirror(state["step"] or {}, state)


# ---- the lecturer's controls ----------------------------------------------------------------------------------
def _control(action: str, question: str | None = None) -> bool:
    """Reveal (``question``) / end, checked by the store against the session's secret (a student's has none)."""
    c, secret = code(), st.session_state.get(SECRET_KEY)
    if not _allow("control"):
        return False
    try:
        if action == "reveal":
            store().reveal(c, secret, question)
        elif action == "end":
            store().end(c, secret)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        _say(_error_text(err, c or ""))
        return False
    finally:
        _forget(c or "")
    return True


def _next(drawn_for: Any) -> None:
    """Next (a callback): close the poll, or open the lesson's next step (its page, its settings) for everyone.
    ``drawn_for``: the poll's question id or the lesson step the button was drawn for; a click handled twice (or
    after another session moved the class) does nothing the second time."""
    st.session_state[APP_RERUN_KEY] = True
    poll = st.session_state.get(POLL_KEY)
    if poll is not None:
        if poll.get("question") == drawn_for:
            st.session_state.pop(POLL_KEY, None)
        return
    a = lesson_ui.active()
    if a and {"lesson": a[0].id, "step": a[1]} == drawn_for:
        lesson_ui.go(a[0].id, a[1] + 1)


def _reveal(drawn_for: str) -> None:
    """Reveal (a callback, so that a click is not lost when a loaded server cuts the fragment's run short, as a
    button's return value is): the question the button was drawn for, for good. When another tab's Next moved the
    class on first, that question is revealed all the same (Back finds it revealed) and the class's new question
    stays open: a reveal is never lost to a concurrent Next, nor given to the step after it."""
    if _control("reveal", drawn_for):
        st.session_state[APP_RERUN_KEY] = True  # the whole screen shows the reveal


def join_link(class_code: str) -> str | None:
    """``<the address the lecturer's browser reached the server by>/?class=CODE`` (``EXPLORER_PUBLIC_URL``
    instead, behind a proxy that rewrites it)."""
    base = os.environ.get(ENV_PUBLIC_URL)
    if not base:
        try:
            url = st.context.url
        except Exception:  # noqa: BLE001
            url = None
        if not url:
            return None
        from urllib.parse import urlsplit
        parts = urlsplit(url)
        base = f"{parts.scheme}://{parts.netloc}"
    return f"{base.rstrip('/')}/?{PARAM_CODE}={class_code}"


def lecturer_link(class_code: str, secret: str) -> str | None:
    link = join_link(class_code)
    return None if link is None else f"{link}&{PARAM_SECRET}={quote(secret)}"


def _full_screen(class_code: str) -> None:
    link = join_link(class_code)

    def body() -> None:
        st.html(f'<div style="text-align:center;font:700 clamp(2.5rem,9vw,6rem) ui-monospace,monospace;'
                f'letter-spacing:0.15em">{html.escape(class_code)}</div>')
        qr = qr_code(link) if link else None
        if qr is not None:
            st.html(qr_html(link, qr, "min(50vh, 80vw)", "clamp(1rem, 4vw, 2rem)"))
            if is_local(link):
                st.warning(t("share.qr_local", host=html.escape(link.split("/")[2])))

    st.dialog(t("class.qr_title"), width="large")(body)()


def _table(step: dict, counts: dict, revealed: bool, lang: str):
    """The answers' table for the open question (None when there is none, or its key cannot be computed)."""
    dist = counts["distribution"]
    if step.get("kind") == "poll":
        return choice_table(list(step.get("options", [])), dist)
    found = _step_of(step)
    if not found or found[1].question is None:
        return None
    lesson, s = found
    try:
        key = lesson_ui.frozen_key(lesson, s)
    except Exception:  # noqa: BLE001 -- the banner says why
        return None
    if key.kind == "choice":
        return choice_table([o[lang] for o in key.options], dist, key.correct)
    q = s.question
    return estimate_table(dist, key.correct, lambda v: key.grade(q, v),
                          {"too_low": t("class.dist_too_low"), "within": t("class.dist_within", within=q.within),
                           "too_high": t("class.dist_too_high")})


def _distribution(box, words, table, joined: int, revealed: bool, key: str) -> None:
    """The bar chart of the class's answers (in ``box``) and the sentence its numbers say (in ``words``)."""
    from ui.widgets import show_figure

    s = summary(table, joined)
    parts = [t("class.dist_sentence", answered=s["answered"], joined=s["joined"])]
    if s["top"] is not None:
        parts.append(t("class.dist_top", top=md(s["top"]), n=s["top_n"], share=f"{s['top_share']:.0%}"))
    if revealed and s["right"] is not None and s["answered"]:
        parts.append(t("class.dist_right", right=s["right"], answered=s["answered"], share=f"{s['right_share']:.0%}"))
    # the lecturer's bar redraws every second: the figure is rebuilt only when its numbers change
    sig = (table.to_json(), revealed, current_lang(), key)
    cached = st.session_state.get("class._figure")
    if cached is None or cached[0] != sig:
        cached = (sig, distribution_bar(table, revealed))
        st.session_state["class._figure"] = cached
    with box:
        show_figure(cached[1], key)
    words.markdown(("" if current_lang() == "zh" else " ").join(parts))


def _page_hash() -> str | None:
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.page_script_hash if ctx else None


def _page_moved() -> bool:
    """Whether this live bar's run was asked for from another page than the one the last whole run drew; then
    the session's lesson step is opened again, for the whole-app run the caller asks for.

    The browser's timer asks for the bar's rerun naming the page the browser is on. One sent while the server
    switched pages (the class's Next) names the old page and is run after the switch: Streamlit then takes the
    old page, and the old step's address, for the session's while the new page stays drawn, and nothing moved
    the page again (a loaded server left a phone on the old step's address). The whole-app run goes to the
    session's step, its settings applied again, not to the old address's step."""
    drawn = st.session_state.get(PAGE_KEY)
    if drawn is None or drawn == _page_hash():
        return False
    a = st.session_state.get(lesson_ui.ACTIVE_KEY)
    if a:
        lesson_ui.go(a["lesson"], a["step"])
    return True


@st.fragment(run_every=LECTURER_EVERY_S)
def _lecturer_live() -> None:
    """The lecturer's bar: the counts and the answers' chart, live; Reveal and Next."""
    c = code()
    if role() != "lecturer" or not c:
        return
    try:
        state = class_state(c, fresh=True)
        step = state["step"] or {}
        q = state["question"]
        counts = store().counts(c, q or "-")
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        st.warning(_error_text(err, c))
        return
    if (state["step_seq"] != st.session_state.get(SYNCED_KEY) or st.session_state.pop(APP_RERUN_KEY, False)
            or state["revealed"] != st.session_state.get(DREW_REVEAL_KEY, state["revealed"]) or _page_moved()):
        st.rerun()  # another lecturer session moved the class or revealed, or Next: the whole screen takes it
    lang = current_lang()
    bar = st.container(border=True, key="class.bar")
    row = bar.container(horizontal=True, vertical_alignment="center", key="class.count")
    counted = (t("class.count", joined=counts["joined"], answered=counts["answered"]) if q
               else t("class.count_no_question", joined=counts["joined"]))
    row.markdown(t("class.code", code=c) + " · " + counted)
    if q and not state["revealed"]:
        row.button(t("class.reveal"), key="class.reveal", type="primary", on_click=_reveal, args=(q,))
    poll = step.get("kind") == "poll"
    label = t("class.close_poll") if poll else t("class.next")
    row.button(label, key="class.next", disabled=not poll and lesson_ui.active() is None, on_click=_next,
               args=(step.get("question") if poll else st.session_state.get(lesson_ui.ACTIVE_KEY),))
    # the lecturer's screen is often the room's: the answers so far can be kept off it until the reveal
    hidden = bool(q) and not state["revealed"] and not row.toggle(
        t("class.show_answers"), value=st.session_state.get(SHOW_KEY, True), key="class.show_answers",
        on_change=_remember_show)  # the choice outlives the widget (drawn only while a question is open)
    if hidden:
        bar.caption(t("class.answers_hidden"))
    table = _table(step, counts, state["revealed"], lang) if q and not hidden else None
    if table is None:
        _roster(bar, c)
        return
    # the chart beside the numbers: on a 1280 x 720 projector the lesson's text and chart stay in view below
    chart_col, words_col = bar.columns([3, 2], vertical_alignment="center")
    _distribution(chart_col, words_col, table, counts["joined"], state["revealed"], "class.distribution")
    _roster(words_col, c)


def _remember_show() -> None:
    st.session_state[SHOW_KEY] = st.session_state["class.show_answers"]


def _roster(box, c: str) -> None:
    """Who joined (nicknames as plain text; never next to an answer), live in the lecturer's bar."""
    try:
        people = store().roster(c, st.session_state.get(SECRET_KEY))
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        box.caption(_error_text(err, c))
        return
    with box.container(key="class.roster"):
        with st.expander(t("class.roster", n=len(people))):
            names = [md(p["nickname"]) for p in people if p["nickname"]]
            anonymous = len(people) - len(names)
            shown = names + ([t("class.roster_anonymous", n=anonymous)] if anonymous else [])
            st.markdown(", ".join(shown) if shown else t("class.roster_empty"))


def _open_poll() -> None:
    question = (st.session_state.get("class.poll.question") or "").strip()[:MAX_POLL_TEXT]
    options = [o.strip()[:MAX_POLL_TEXT] for o in (st.session_state.get("class.poll.options") or "").splitlines()
               if o.strip()]
    if not question or not 2 <= len(options) <= MAX_POLL_OPTIONS or len(set(options)) != len(options):
        _say(t("class.poll_bad"))
        return
    seq = int(time.time() * 1000) % 10**9
    poll = {"kind": "poll", "question": f"poll:{seq}", "prompt": question, "options": options,
            "page": st.session_state.get("state.page", "")}
    a = st.session_state.get(lesson_ui.ACTIVE_KEY)
    if a:  # the lesson step the poll interrupts: the students keep it open (its question's chart stays hidden)
        poll.update(lesson=a["lesson"], step=a["step"])
    st.session_state[POLL_KEY] = poll


def _end() -> None:
    c = code()
    if _control("end"):
        leave_class(t("class.ended_lecturer", code=md(c)))


def class_panel() -> None:
    """The sidebar's class section: start or join; the lecturer's code, link, QR, poll, roster and End."""
    box = st.sidebar.expander(t("class.section"), expanded=role() is not None)
    if role() is None:
        box.button(t("class.start"), key="class.start", on_click=start_class, help=t("class.start_help"),
                   type="primary")
        form = box.form("class.join_form", border=False)
        form.text_input(t("class.join_code"), key="class.join_code", max_chars=12,
                        placeholder=t("class.join_code_placeholder"))
        form.text_input(t("class.nickname"), key="class.nickname", max_chars=MAX_NICKNAME)
        form.form_submit_button(t("class.join"), key="class.join", on_click=_join_form)
        return
    c = code()
    if role() == "student":
        box.markdown(t("class.code", code=c))
        box.button(t("class.leave"), key="class.leave", on_click=leave_class, type="tertiary")
        return
    box.markdown(t("class.code", code=c))
    link = join_link(c)
    if link:
        qr = qr_code(link)
        if qr is not None:
            box.html(qr_html(link, qr, "100%", "0.8rem"))
    if box.button(t("class.qr"), key="class.qr", icon="📱", type="primary"):
        _full_screen(c)
    with box.expander(t("class.lecturer_link")):
        secret_link = lecturer_link(c, st.session_state.get(SECRET_KEY, ""))
        st.caption(t("class.lecturer_link_help"))
        with st.container(key="class.lecturer_link"):
            st.code(secret_link or "", language=None, wrap_lines=True)
    with box.expander(t("class.poll")):
        with st.form("class.poll_form", border=False):
            st.text_input(t("class.poll_question"), key="class.poll.question", max_chars=MAX_POLL_TEXT)
            st.text_area(t("class.poll_options"), key="class.poll.options", height=120)
            st.form_submit_button(t("class.poll_open"), key="class.poll.open", on_click=_open_poll)
    box.button(t("class.end"), key="class.end", on_click=_end, type="tertiary")


# ---- the student's bar and the class's banner ------------------------------------------------------------------
def _unfollow() -> None:
    st.session_state[FOLLOW_KEY] = False


def _back() -> None:
    st.session_state[FOLLOW_KEY] = True
    st.session_state.pop(SEEN_KEY, None)


@st.fragment(run_every=FOLLOW_EVERY_S)
def _student_live() -> None:
    """The student's bar; while following, a whole-app rerun only when the class's step, reveal or end changed."""
    c = code()
    if role() != "student" or not c:
        return
    following = bool(st.session_state.get(FOLLOW_KEY))
    if following:
        try:
            state = class_state(c)
            if (state["step_seq"], state["revealed"], state["ended"]) != st.session_state.get(SEEN_KEY) \
                    or _page_moved():
                st.rerun()
        except (ClassError, sqlalchemy.exc.SQLAlchemyError):
            st.rerun()  # the hook says why and leaves the class
        _watch(st.session_state.get(DRAWN_KEY))
    row = st.container(horizontal=True, vertical_alignment="center", key="class.student_bar")
    row.markdown(t("class.following" if following else "class.not_following", code=c))
    if following:
        row.button(t("class.unfollow"), key="class.unfollow", on_click=_unfollow, type="tertiary")
    else:
        row.button(t("class.back"), key="class.back", on_click=_back, type="primary")


# A following phone checks that it shows what the server drew last (the step's page, its question box) and
# reloads itself when it has not for WATCH_MISSES checks in a row while idle. With a loaded server, Streamlit
# 1.67 sometimes left a phone without the question box the server had drawn (the server's run ended; the page
# never got it), or on the old step's address; a reload comes back to the class where it is (its cookie, its
# link). Each run of the bar writes a fresh expectation; a bar that stopped (the student left) writes none, and
# an expectation older than WATCH_FRESH_MS is not checked.
WATCH_EVERY_MS, WATCH_MISSES, WATCH_FRESH_MS = 2000, 4, 10_000
WATCH_RELOADS, WATCH_WINDOW_MS = 3, 300_000
QUESTION_BOX = ".st-key-class-question"  # the class step's box (class.question), on the page for the check
WATCH_JS = """<style>.st-key-class-watch {{ display: none; }}</style><script>(() => {{ /* run {run} */
  window.classExpect = {{ path: {path}, box: {box}, at: Date.now() }};
  if (window.classWatch) return;
  let misses = 0;
  window.classWatch = setInterval(() => {{
    const e = window.classExpect;
    if (!e || Date.now() - e.at > {fresh}) {{ misses = 0; return; }}
    if (document.querySelector('[data-testid="stStatusWidget"]')) return;  // a run on its way: not a miss
    const here = location.pathname.replace(/\\/$/, '').split('/').pop();
    const ok = (!e.path || here === e.path) && (!e.box || document.querySelector(e.box));
    misses = ok ? 0 : misses + 1;
    if (misses < {misses}) return;
    misses = 0;  // at most {reloads} reloads in {window_s} s: a page that cannot show it is not reloaded forever
    const recent = JSON.parse(sessionStorage.getItem('classReloads') || '[]').filter(t => Date.now() - t < {window_ms});
    if (recent.length >= {reloads}) return;
    sessionStorage.setItem('classReloads', JSON.stringify([...recent, Date.now()]));
    location.reload();
  }}, {every});
}})();</script>"""


def _watch(drawn: dict | None) -> None:
    """The phone's check of what the last whole run drew (:data:`WATCH_JS`), from the student's live bar."""
    if not drawn:
        return
    # the run's clock makes each run's text new, so the browser runs it again: the expectation stays fresh
    st.container(key="class.watch").html(WATCH_JS.format(
        run=time.monotonic_ns(), path=json.dumps(drawn["path"]), box=json.dumps(drawn["box"]), fresh=WATCH_FRESH_MS,
        misses=WATCH_MISSES, every=WATCH_EVERY_MS, reloads=WATCH_RELOADS, window_s=WATCH_WINDOW_MS // 1000,
        window_ms=WATCH_WINDOW_MS), unsafe_allow_javascript=True)


def _send(question: str, value: Any) -> None:
    """A student's answer (a button's callback): stored, changeable until the reveal."""
    if not _allow("answer"):
        return
    try:
        store().answer(code(), student_id(), question, value)
    except NotJoined:  # the class was joined on another server process or before a purge: join again
        if join_class(code()):
            try:
                store().answer(code(), student_id(), question, value)
            except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
                _say(_error_text(err, code()))
                return
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        _say(_error_text(err, code()))
        _forget(code() or "")  # refused (revealed, or the class moved on): this run reads the class as it is
        return
    st.session_state.setdefault(MINE_KEY, {})[question] = value


def _send_estimate(question: str) -> None:
    value = st.session_state.get("class.answer.value")
    if value is not None:
        _send(question, float(value))


def _answer_row(question: str, labels: list[str] | None, within: str | None = None) -> None:
    """A student's answer controls: one button per option (``labels``), or an estimate's number box and Send
    (``within``: its stated tolerance).

    Not a ``st.fragment``, though a click would then rerun only this row instead of the page (0.02 s of the
    server's time instead of 0.18 s, bench/bench_classroom.py): with Streamlit 1.67, when the class moved on
    while this fragment and the student's live bar were on the page, the next page drawn lacked some of its
    elements (the question box) on about half of ten phones, in or out of the box."""
    mine = st.session_state.get(MINE_KEY, {}).get(question)
    if labels is not None:
        row = st.container(horizontal=True, key="class.answer")
        for i, label in enumerate(labels):
            row.button(label, key=f"class.answer.{i}", on_click=_send, args=(question, i),
                       type="primary" if mine == i else "secondary", icon="✔️" if mine == i else None)
        st.caption(t("class.your_answer", answer=labels[mine]) if isinstance(mine, int) and 0 <= mine < len(labels)
                   else t("class.no_answer_yet"))
        return
    row = st.container(horizontal=True, vertical_alignment="bottom", key="class.answer")
    row.number_input(t("lessons.estimate_within", within=within), key="class.answer.value", value=None, format="%g")
    row.button(t("class.send"), key="class.answer.send", on_click=_send_estimate, args=(question,), type="primary")
    st.caption(t("class.sent_number", answer=significant(mine)) if isinstance(mine, (int, float)) and not
               isinstance(mine, bool) else t("class.no_answer_yet"))


def _messages() -> None:
    now = time.monotonic()
    msgs = {text: until for text, until in st.session_state.get(MSG_KEY, {}).items() if until > now}
    st.session_state[MSG_KEY] = msgs
    if msgs:
        st.warning("\n\n".join(msgs))


# on a narrow screen (a phone, where the open sidebar covers the page) fold the sidebar once, as its button does
CLOSE_SIDEBAR_JS = """<script>(() => { if (window.innerWidth > 640) return; let n = 0; const t = setInterval(() => {
  const b = document.querySelector(
    '[data-testid="stSidebar"][aria-expanded="true"] [data-testid="stSidebarCollapseButton"] button');
  if (b || ++n > 20) { clearInterval(t); if (b) b.click(); } }, 150); })();</script>"""


def _scripts() -> None:
    """This run's scripts, in one hidden box under the bar (scripts alone would each leave a gap above the
    question on a phone): the lecturer's and the student's cookies, written by this run's page (after the hooks'
    page switches, which drop what a run drew before them: a reload or a restarted server comes back as the same
    person), and the sidebar folded on a phone that just joined."""
    bodies = []
    cookie = st.session_state.pop("class._set_cookie", None)
    if cookie:
        bodies.append(_cookie_js(COOKIE_LECTURER, cookie))
    sid = st.session_state.get(STUDENT_KEY)
    if sid and st.session_state.get("class._cookie_sid") != sid:  # once per session
        st.session_state["class._cookie_sid"] = sid
        bodies.append(_cookie_js(COOKIE_STUDENT, sid, max_age=400 * 24 * 3600))
    if st.session_state.pop("class._close_sidebar", False):  # joined: on a phone the question, not the sidebar
        bodies.append(CLOSE_SIDEBAR_JS)
    if bodies:
        st.container(key="class.scripts").html("<style>.st-key-class-scripts { display: none; }</style>"
                                               + "".join(bodies), unsafe_allow_javascript=True)


def class_banner(here: str) -> bool:
    """app.py, instead of the lesson banner while in a class: the bar (live) and the class step's question and
    reveal. False when the lesson banner should be drawn as usual (no class, a student exploring on their own)."""
    if here in ROOT_PAGES:
        return False  # the hidden root page switches to the first page at once: draw there, not here
    r = role()
    st.session_state[PAGE_KEY] = _page_hash()
    # the live bar is the page's first element in every run: a fragment's id is its place on the page, and a run
    # that drew a message or a cookie above it gave it another id; the server drops a click or a timer's rerun
    # addressed to an id it no longer holds
    if r == "lecturer":
        _lecturer_live()
    elif r == "student":
        if APPLIED_KEY in st.session_state:
            st.session_state[SEEN_KEY] = st.session_state.pop(APPLIED_KEY)
        _student_live()
    _scripts()
    _messages()
    if r is None:
        st.session_state.pop(lesson_ui.GATE_TEXT_KEY, None)
        return False
    st.session_state[lesson_ui.GATE_TEXT_KEY] = "class.predict_first"
    if r == "student" and not st.session_state.get(FOLLOW_KEY):
        return False
    drawn = {"path": here, "box": None}  # what this run draws, for a following phone's check (_watch)
    if r == "student":
        st.session_state[DRAWN_KEY] = drawn
    try:
        state = class_state(code())
    except (ClassError, sqlalchemy.exc.SQLAlchemyError):
        return False
    step = state["step"] or {}
    lang = current_lang()
    if step.get("kind") == "poll":
        _poll_banner(step, state, lang)
        drawn["box"] = QUESTION_BOX
        return True  # the lesson's banner waits until the poll is closed
    found = _step_of(step)
    if found is None or found[1].page != here:
        if r == "student" and not step:
            st.info(t("class.waiting"))
        return r == "student"
    lesson, s = found
    if s.question is None and r == "lecturer":
        return False  # a step without a question: the lesson's banner, as for one learner
    _lesson_banner(lesson, s, state, lang)
    drawn["box"] = QUESTION_BOX
    return True


def _poll_banner(step: dict, state: dict, lang: str) -> None:
    box = st.container(border=True, key="class.question")
    box.markdown(t("class.poll_line", prompt=md(step.get("prompt", ""))))
    labels = [md(o) for o in step.get("options", [])]
    q = step["question"]
    if role() == "student" and not state["revealed"]:
        _mine(state)
        with box:
            _answer_row(q, labels)
        return
    if state["revealed"]:
        mine = _mine(state) if role() == "student" else None
        if isinstance(mine, int) and 0 <= mine < len(labels):
            box.markdown(t("class.poll_result_mine", mine=labels[mine]))
        _shared_distribution(box, step, state, lang)


def _shared_distribution(box, step: dict, state: dict, lang: str) -> None:
    """After the reveal, on a student's screen: the class's answers (the lecturer's bar already shows them)."""
    if role() != "student":
        return
    try:
        counts = store().counts(code(), state["question"])
    except (ClassError, sqlalchemy.exc.SQLAlchemyError):
        return
    table = _table(step, counts, True, lang)
    if table is not None:
        _distribution(box, box, table, counts["joined"], True, "class.distribution")


def _lesson_banner(lesson, s, state: dict, lang: str) -> None:
    """A class's lesson step with a question: its text, then the answer buttons (student) or the options
    (lecturer) until the reveal; after it the answer, the student's own, the explanation and the class's chart."""
    box = st.container(border=True, key="class.question")
    n = s.number
    box.progress(n / len(lesson.steps), text=t("lessons.progress", title=lesson.title[lang], n=n,
                                               total=len(lesson.steps)))
    box.markdown(s.text[lang])
    q = s.question
    if q is None:  # a student following a step without a question: its text, no lesson buttons
        return
    box.markdown(f"**{q.prompt[lang]}**")
    try:
        key = lesson_ui.frozen_key(lesson, s)
    except Exception as err:  # noqa: BLE001 -- a broken key must not hide the page
        box.error(t("lessons.key_failed", error=str(err)))
        return
    labels = [o[lang] for o in key.options] if key.kind == "choice" else []
    right_text = key.options[key.correct][lang] if key.kind == "choice" else key.values[lang]["answer"]
    if not state["revealed"]:
        if role() == "student":
            _mine(state)  # read once: the row shows it
            within = None if key.kind == "choice" else q.within
            with box:
                _answer_row(state["question"], labels if key.kind == "choice" else None, within)
        else:
            box.markdown(" · ".join(f"**{chr(65 + i)}** {label}" for i, label in enumerate(labels)) if labels
                         else t("lessons.estimate_within", within=q.within))
            lesson_ui.nav_buttons(lesson, n, box)
        return
    if role() == "student":
        mine = _mine(state)
        mine_text = (labels[mine] if key.kind == "choice" and isinstance(mine, int) and 0 <= mine < len(labels)
                     else significant(mine) if isinstance(mine, (int, float)) else None)
        if mine_text is None:
            box.info(t("class.reveal_none", answer=right_text))
        elif key.grade(q, mine):
            box.success(t("class.reveal_right", answer=right_text))
        else:
            box.error(t("class.reveal_wrong", answer=right_text, mine=mine_text))
    else:
        box.success(t("class.reveal_answer", answer=right_text))
    box.markdown(key.explanation(q, lang))
    _shared_distribution(box, {"kind": "lesson", "lesson": lesson.id, "step": n}, state, lang)
    lesson_ui.scroll_to_chart(lesson, s)  # once: the revealed chart into view
    if role() == "lecturer":
        lesson_ui.nav_buttons(lesson, n, box)
