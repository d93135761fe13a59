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

The modules: ``class_mode`` (this one) is the session's seat (one typed :class:`ClassSeat` under one session key,
not loose strings), the store's shared state, joining, starting and leaving; ``class_hooks`` the hooks app.py runs
(follow, sync, mirror); ``class_lecturer`` the lecturer's controls, live bar and sidebar section; ``class_banner``
what a class draws above the page; ``class_results`` the answers' tables and the results to keep.

Who is who: the lecturer's secret (made with the class) lives in the lecturer's session and in a cookie of the
lecturer's browser (so a reload or a server restart keeps the role) and travels only in the private lecturer link
(``?class=CODE&lecturer=SECRET``, removed from the address bar at once). Every control action hands the session's
secret to the store, which checks it: a student's session has none. A student is a random id kept in a cookie
(``explorer_student``), so a reload, a lost network or a restarted server rejoins with the answers kept.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import sqlalchemy.exc
import streamlit as st

from teaching import lessons as lesson_files
from teaching.course import Pointer
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
    JoinsClosed,
    NotLecturer,
    StoreLost,
    StoreUnavailable,
    TooManyJoins,
    UnknownClass,
    new_student_id,
)
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.i18n import t
from ui.state import apply_pending

SEAT_KEY = "class.seat"  # this session's ClassSeat: every fact about its place in a class, under one key


@dataclass
class ClassSeat:
    """This session's place in a class (one typed object in ``st.session_state[SEAT_KEY]``, see :func:`seat`)."""

    role: str | None = None  # "lecturer" or "student" (None: not in a class)
    code: str | None = None  # the class's join code
    secret: str | None = None  # the lecturer's secret (never sent to a browser but the lecturer's own)
    verified: str | None = None  # the secret the store last accepted for this session
    student_id: str | None = None  # this browser's random id (kept in a cookie; survives leaving a class)
    following: bool = False  # a student's page follows the lecturer's step
    seen: tuple | None = None  # (step_seq, revealed, ended) this session last drew (its live bar reruns on news)
    applied: tuple | None = None  # ... that this run took: drawn, and so seen, once the run reaches the banner
    poll: dict | None = None  # the lecturer's open quick poll (a step)
    mine: dict = field(default_factory=dict)  # {question id: this student's answer}
    messages: dict = field(default_factory=dict)  # {text: monotonic time until which it is shown}
    toasted: set = field(default_factory=set)  # the messages already shown as a toast
    rate: dict = field(default_factory=dict)  # {action kind: the times it was taken in its window}
    show_answers: bool = True  # the lecturer's choice: the answers' chart on screen before the reveal
    synced_seq: int | None = None  # the lecturer session: the class's step_seq it last wrote or took
    drew_revealed: bool | None = None  # the lecturer session: whether its last whole run drew the reveal
    app_rerun: bool = False  # a button in the lecturer's fragment asks for a whole-app rerun
    page: str | None = None  # the page (its script hash) this session's last whole run drew
    drawn: dict | None = None  # what a following student's last whole run drew: its page's path, its question box
    ran: bool = False  # a following student's session has run the class hook once
    set_cookie: str | None = None  # the lecturer cookie to write on this run
    cookie_sid: str | None = None  # the student id this session wrote to its cookie
    close_sidebar: bool = False  # just joined: on a phone the question, not the sidebar
    figure: Any = None  # the answers' chart last drawn, with what it was drawn from

    # what outlives a class: the browser's (student id, its cookie), the session's (messages, rate window, chart
    # choice, whether its hook has run) and what one run hands the next (a cookie to write, a rerun, the sidebar)
    KEPT = ("student_id", "cookie_sid", "messages", "toasted", "rate", "show_answers", "ran", "set_cookie",
            "app_rerun", "close_sidebar", "figure")

    def leave(self) -> None:
        """Out of the class: every field back to its default but :attr:`KEPT`'s."""
        kept = ClassSeat(**{name: getattr(self, name) for name in self.KEPT})
        self.__dict__.update(kept.__dict__)


def take(name: str) -> Any:
    """A seat field's value, the field back to its default (what a run hands the next: a cookie, a rerun)."""
    me = seat()
    value = getattr(me, name)
    setattr(me, name, ClassSeat.__dataclass_fields__[name].default)
    return value


def seat() -> ClassSeat:
    """This session's :class:`ClassSeat` (made on first use)."""
    found = st.session_state.get(SEAT_KEY)
    if found is None:
        found = st.session_state[SEAT_KEY] = ClassSeat()
    return found


MESSAGE_S = 12.0
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


def forget(code: str) -> None:
    with _states_lock:
        _states.pop(code, None)


# ---- session helpers -------------------------------------------------------------------------------------
def role() -> str | None:
    return seat().role


def code() -> str | None:
    return seat().code


def say(text: str) -> None:
    """A message for this session, shown above the page for :data:`MESSAGE_S` seconds (a link's run is followed at
    once by others: the language, the lesson's settings)."""
    msgs = seat().messages
    msgs[text] = time.monotonic() + MESSAGE_S


def allow(kind: str) -> bool:
    """Whether this session may take one more ``kind`` action now (a sliding window, :data:`RATES`)."""
    limit, window = RATES[kind]
    now = time.monotonic()
    rate = seat().rate
    times = [x for x in rate.get(kind, []) if now - x < window]
    if len(times) >= limit:
        rate[kind] = times
        say(t("class.err.too_fast"))
        return False
    rate[kind] = [*times, now]
    return True


# each store refusal's words (they may name the class's code; formatting ignores what a string does not use)
ERROR_TEXT = ((StoreLost, "class.err.store_lost"), (UnknownClass, "class.err.unknown"),
              (ClassExpired, "class.err.expired"), (ClassEnded, "class.err.ended"),
              (ClassFull, "class.err.full"), (JoinsClosed, "class.err.joins_closed"),
              (NotLecturer, "class.err.not_lecturer_action"), (AnswerClosed, "class.err.closed"),
              (TooManyJoins, "class.err.too_many_joins"))
STORE_DOWN_KEY = "class.store_down"  # the session's last "class store unreachable, retrying (n s)" message


def error_text(err: Exception, class_code: str) -> str:
    """A store error in the reader's words: a refusal (:data:`ERROR_TEXT`), bad input, the database not answering
    for now (:class:`StoreUnavailable`: "retrying (n s)"), or the database's failure."""
    if isinstance(err, StoreUnavailable):
        return t("class.err.unavailable", seconds=int(err.seconds))
    key = next((key for kind, key in ERROR_TEXT if isinstance(err, kind)), None)
    if key is not None:
        return t(key, code=md(class_code or ""))
    if isinstance(err, BadInput):
        return t("class.err.bad_input", error=md(str(err)))
    return t("class.err.store", error=md(type(err).__name__))


def store_down(err: StoreUnavailable, class_code: str | None) -> None:
    """The class store is not answering for now: the session keeps its seat (the class is still there; its next
    run tries again) and says so, one message counting the outage's seconds (each replaces the one before; only
    the first is toasted)."""
    me, text = seat(), error_text(err, class_code or "")
    before = st.session_state.pop(STORE_DOWN_KEY, None)
    if before is not None and me.messages.pop(before, None) is not None:
        me.toasted.add(text)
    say(text)
    st.session_state[STORE_DOWN_KEY] = text


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
    return unquote(value) if isinstance(value, str) else None  # written URL-encoded by cookie_js


def cookie_js(name: str, value: str, max_age: int = 13 * 3600) -> str:
    return (f"<script>document.cookie = '{name}=' + {quote(value)!r} + '; path=/; max-age={max_age}; "
            f"SameSite=Lax';</script>")


def student_id() -> str:
    """This browser's random student id (kept in a cookie: a reload or a restarted server rejoins as the same)."""
    sid = seat().student_id
    if sid is None:
        sid = _cookie(COOKIE_STUDENT)
        if not sid or not 8 <= len(sid) <= 64 or not all(ch.isalnum() or ch in "-_" for ch in sid):
            sid = new_student_id()
        seat().student_id = sid  # written to the cookie by class_hook (in the script, not a callback)
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
    if not allow("control"):
        return
    try:
        new_code, secret = store().create_class()
    except (StoreUnavailable, sqlalchemy.exc.SQLAlchemyError) as err:  # the store retried for 30 s: try again later
        say(error_text(err, ""))
        return
    _become_lecturer(new_code, secret, new=True)


def _become_lecturer(class_code: str, secret: str, new: bool = False) -> None:
    """This session is the class's lecturer. A new class takes the lecturer's screen as its first step; an
    existing one (a lecturer link, a reload, a restart) is taken where it is (:func:`adopt`)."""
    me = seat()
    me.role, me.code, me.secret = "lecturer", class_code, secret
    me.following, me.poll, me.synced_seq = False, None, 0 if new else None
    me.set_cookie = f"{class_code}:{secret}"


def adopt(state: dict) -> None:
    """A lecturer session takes the class's step when another session moved it (a second device of the lecturer,
    a reload, a restart): its poll, or its lesson step (settings and page, through the lessons' ``go``)."""
    seat().synced_seq = state["step_seq"]
    step = state["step"] or {}
    seat().poll = step if step.get("kind") == "poll" else None
    if seat().poll is not None:
        return
    if step.get("kind") == "lesson" and lesson_files.by_id(step.get("lesson", "")):
        if lesson_ui.seat().active != Pointer(step["lesson"], int(step["step"])):
            lesson_ui.go(step["lesson"], step["step"])
            apply_pending()


def join_class(raw_code: Any, nickname: str | None = None) -> bool | None:
    """Join as a student (the join form, a link). False with a message when the code is bad or the class gone;
    None when the store is not answering for now (:func:`store_down`)."""
    c = clean_code(raw_code)
    if c is None:
        say(t("class.err.bad_code"))
        return False
    if not allow("join"):
        return False
    try:
        store().join(c, student_id(), nickname)
    except StoreUnavailable as err:  # None: not refused (a link keeps its code: the next run joins again)
        store_down(err, c)
        return None
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        say(error_text(err, c))
        return False
    me = seat()
    me.role, me.code, me.following, me.close_sidebar, me.seen, me.secret = "student", c, True, True, None, None
    return True


def join_form() -> None:
    """The join form's button (a callback: the session joins before the next run draws anything)."""
    nick = (st.session_state.get("class.nickname") or "").strip()[:MAX_NICKNAME] or None
    join_class(st.session_state.get("class.join_code"), nick)


def leave_class(message: str | None = None) -> None:
    seat().leave()
    if message:
        say(message)
    if PARAM_CODE in st.query_params:
        del st.query_params[PARAM_CODE]


def enter_from_link(raw_code: str, secret: str | None) -> None:
    """A link's ``?class=`` (and perhaps ``&lecturer=``), or a reload's: the lecturer (a valid secret from the
    link or this browser's cookie) or a student."""
    c = clean_code(raw_code)
    if c is None:
        say(t("class.err.bad_code"))
        del st.query_params[PARAM_CODE]
        return
    from_link = secret is not None
    saved = _lecturer_cookie()
    if secret is None and saved and saved[0] == c:
        secret = saved[1]
    if secret is not None and (not from_link or allow("lecturer")):
        try:
            store().check_lecturer(c, secret)
            _become_lecturer(c, secret)
            return
        except NotLecturer:
            if from_link:
                say(t("class.err.not_lecturer", code=md(c)))
        except StoreUnavailable as err:
            store_down(err, c)
            return
        except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
            leave_class(error_text(err, c))
            return
    if join_class(c) is False:
        if PARAM_CODE in st.query_params:
            del st.query_params[PARAM_CODE]


