"""Class mode, the lecturer's session: the room joins from their phones, follows the lecturer's lesson step,
answers, and sees the reveal.

One mechanism: **the lecturer's step is the class's step.** The lecturer opens a lesson (or a quick poll, or just
a page) as usual; ``class_hooks.class_sync`` writes that step to the class store (``teaching.classroom.ClassStore``:
SQLite by default, PostgreSQL through ``EXPLORER_CLASS_DB``) whenever it differs from the stored one. The students'
phones are not Streamlit sessions: they use the light page ``/join/<CODE>`` (``ui/teaching/phone/``), which reads
the stored state and answers into the store. A join link opened in the full app (an old QR code, a typed
``?class=CODE``) goes to that page.

A reveal is its question's for good (the store's ``reveals``): a quick poll, Back, or a second lecturer tab
coming back to a revealed question finds it revealed, and the store refuses a changed answer to it, whatever sent
the request. After the reveal the lecturer's screen draws the step's chart, which the phones then draw too.

The modules: ``class_mode`` (this one) is the session's seat (one typed :class:`ClassSeat` under one session key,
not loose strings), the store's shared state, starting and leaving; ``class_hooks`` the hooks explorer.py runs
(a link, sync, mirror); ``class_lecturer`` the lecturer's controls, live bar and sidebar section;
``class_banner`` what a class draws above the page; ``class_results`` the answers' tables and the results to keep.

Who is who: the lecturer's secret (made with the class) lives in the lecturer's session and in an HttpOnly,
SameSite cookie the server sets (``/join/api/<CODE>/lecturer``; page scripts cannot read it), so a reload or a
server restart keeps the role, and travels only in the private lecturer link (``?class=CODE&lecturer=SECRET``,
removed from the address bar at once). Every control action hands the session's secret to the store, which checks
it. A student is a random id in an HttpOnly cookie the phone page's server sets.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import sqlalchemy.exc
import streamlit as st

from teaching import lessons as lesson_files
from teaching.course import Pointer
from teaching.classroom import (
    CODE_ALPHABET,
    CODE_LENGTH,
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
)
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.i18n import current_lang, t
from ui.state import apply_pending

SEAT_KEY = "class.seat"  # this session's ClassSeat: every fact about its place in a class, under one key


@dataclass
class ClassSeat:
    """This session's place in a class (one typed object in ``st.session_state[SEAT_KEY]``, see :func:`seat`)."""

    role: str | None = None  # "lecturer" (None: not in a class; students are on the phone page, not here)
    code: str | None = None  # the class's join code
    secret: str | None = None  # the lecturer's secret (never sent to a browser but the lecturer's own)
    verified: str | None = None  # the secret the store last accepted for this session
    poll: dict | None = None  # the lecturer's open quick poll (a step)
    messages: dict = field(default_factory=dict)  # {text: monotonic time until which it is shown}
    toasted: set = field(default_factory=set)  # the messages already shown as a toast
    rate: dict = field(default_factory=dict)  # {action kind: the times it was taken in its window}
    show_answers: bool = True  # the lecturer's choice: the answers' chart on screen before the reveal
    synced_seq: int | None = None  # the lecturer session: the class's step_seq it last wrote or took
    drew_revealed: bool | None = None  # the lecturer session: whether its last whole run drew the reveal
    app_rerun: bool = False  # a button in the lecturer's fragment asks for a whole-app rerun
    page: str | None = None  # the page (its script hash) this session's last whole run drew
    set_cookie: str | None = None  # the lecturer cookie the server sets on this run's request (code:secret)
    redirect: str | None = None  # a join link opened here: this run sends the browser to the phone page
    store_down: str | None = None  # the last "class store unreachable, retrying (n s)" message shown
    figure: Any = None  # the answers' chart last drawn, with what it was drawn from

    # what outlives a class: the session's (messages, rate window, chart choice) and what one run hands the next
    # (a cookie to set, a rerun, a redirect)
    KEPT = ("messages", "toasted", "rate", "show_answers", "set_cookie", "app_rerun", "redirect", "figure")

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
ROOT_PAGES = ("", "home")  # explorer.py's hidden default page (its url path reads "" at "/")
COOKIE_STUDENT = "explorer_student"  # set by the phone page's server (ui/teaching/phone/routes.py)
COOKIE_LECTURER = "explorer_lecturer"
ENV_PUBLIC_URL = "EXPLORER_PUBLIC_URL"
LECTURER_EVERY_S = 1.0  # the lecturer's counts refresh
STATE_TTL_S = 0.5  # one read of a class's state per process and this interval, shared by its sessions
MAX_POLL_OPTIONS = 6
MAX_POLL_TEXT = 120
# actions a session may take in a window (a script forging reruns, guessing lecturer links)
RATES = {"lecturer": (8, 60.0), "control": (30, 10.0)}


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
    before, me.store_down = me.store_down, text
    if before is not None and me.messages.pop(before, None) is not None:
        me.toasted.add(text)
    say(text)


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
    return unquote(value) if isinstance(value, str) else None


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
    me.poll, me.synced_seq = None, 0 if new else None
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
    to_phone_page(c)


def to_phone_page(class_code: str) -> None:
    """A join link opened in the full app: students answer on the phone page, so this run sends the browser there
    (``ClassSeat.redirect``, carried out by ``class_banner``), saying so for a browser that does not follow."""
    lang = "zh" if current_lang() == "zh" else "en"
    seat().redirect = f"/join/{class_code}?lang={lang}"
    say(t("class.to_phone_page", code=md(class_code)))
    if PARAM_CODE in st.query_params:
        del st.query_params[PARAM_CODE]


