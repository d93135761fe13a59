"""Class mode above the page: the student's live bar, the class step's question with its answer buttons, the
reveal, a quick poll, the class's messages, and the phone's watchdog."""

from __future__ import annotations

import json
import time
from typing import Any

import sqlalchemy.exc
import streamlit as st

from teaching.classroom import ClassError, NotJoined, StoreUnavailable
from ui.teaching import steps as lesson_ui
from ui.teaching.lesson_banner import nav_buttons, scroll_to_chart
from ui.teaching.gate import GATE_TEXT_KEY
from ui.caches.classroom import store
from ui.escape import md
from ui.format import significant
from ui.i18n import current_lang, t
from ui.teaching.class_mode import (
    COOKIE_LECTURER, COOKIE_STUDENT, FOLLOW_EVERY_S, ROOT_PAGES, allow, class_state, code, cookie_js, error_text,
    forget, join_class, role, say, seat, student_id, take,
)
from ui.teaching.class_hooks import my_answer, step_of
from ui.teaching.class_lecturer import draw_distribution, lecturer_live, page_hash, page_moved
from ui.teaching.class_results import answers_table


# ---- the student's bar and the class's banner ------------------------------------------------------------------
def _unfollow() -> None:
    seat().following = False


def _back() -> None:
    seat().following = True
    take("seen")


@st.fragment(run_every=FOLLOW_EVERY_S)
def _student_live() -> None:
    """The student's bar; while following, a whole-app rerun only when the class's step, reveal or end changed."""
    c = code()
    if role() != "student" or not c:
        return
    following = bool(seat().following)
    if following:
        try:
            state = class_state(c)
            if (state["step_seq"], state["revealed"], state["ended"]) != seat().seen \
                    or page_moved():
                st.rerun()
        except StoreUnavailable as err:  # the store retries: the seat is kept, no whole-app rerun until it answers
            st.warning(error_text(err, c))
        except (ClassError, sqlalchemy.exc.SQLAlchemyError):
            st.rerun()  # the hook says why and leaves the class
        _watch(seat().drawn)
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
    if not allow("answer"):
        return
    try:
        store().answer(code(), student_id(), question, value)
    except NotJoined:  # the class was joined on another server process or before a purge: join again
        if join_class(code()):
            try:
                store().answer(code(), student_id(), question, value)
            except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
                say(error_text(err, code()))
                return
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        say(error_text(err, code()))
        forget(code() or "")  # refused (revealed, or the class moved on): this run reads the class as it is
        return
    seat().mine[question] = value


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
    mine = seat().mine.get(question)
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
    """The session's class messages above the page; each new one also as a toast, which a phone shows wherever
    the page is scrolled (the class ended, joining closed)."""
    now = time.monotonic()
    msgs = {text: until for text, until in seat().messages.items() if until > now}
    seat().messages = msgs
    if msgs:
        st.warning("\n\n".join(msgs))
    for text in msgs.keys() - seat().toasted:
        st.toast(text, icon="🧑‍🏫")
    seat().toasted = set(msgs)


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
    cookie = take("set_cookie")
    if cookie:
        bodies.append(cookie_js(COOKIE_LECTURER, cookie))
    sid = seat().student_id
    if sid and seat().cookie_sid != sid:  # once per session
        seat().cookie_sid = sid
        bodies.append(cookie_js(COOKIE_STUDENT, sid, max_age=400 * 24 * 3600))
    if take("close_sidebar"):  # joined: on a phone the question, not the sidebar
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
    seat().page = page_hash()
    # the live bar is the page's first element in every run: a fragment's id is its place on the page, and a run
    # that drew a message or a cookie above it gave it another id; the server drops a click or a timer's rerun
    # addressed to an id it no longer holds
    if r == "lecturer":
        lecturer_live()
    elif r == "student":
        if seat().applied is not None:
            seat().seen = take("applied")
        _student_live()
    _scripts()
    _messages()
    if r is None:
        st.session_state.pop(GATE_TEXT_KEY, None)
        return False
    st.session_state[GATE_TEXT_KEY] = "class.predict_first"
    if r == "student" and not seat().following:
        return False
    drawn = {"path": here, "box": None}  # what this run draws, for a following phone's check (_watch)
    if r == "student":
        seat().drawn = drawn
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
    found = step_of(step)
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
        my_answer(state)
        with box:
            _answer_row(q, labels)
        return
    if state["revealed"]:
        mine = my_answer(state) if role() == "student" else None
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
    table = answers_table(step, counts, True, lang)
    if table is not None:
        draw_distribution(box, box, table, counts["joined"], True, "class.distribution")


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
            my_answer(state)  # read once: the row shows it
            within = None if key.kind == "choice" else q.within
            with box:
                _answer_row(state["question"], labels if key.kind == "choice" else None, within)
        else:
            box.markdown(" · ".join(f"**{chr(65 + i)}** {label}" for i, label in enumerate(labels)) if labels
                         else t("lessons.estimate_within", within=q.within))
            nav_buttons(lesson, n, box)
        return
    if role() == "student":
        mine = my_answer(state)
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
    scroll_to_chart(lesson, s)  # once: the revealed chart into view
    if role() == "lecturer":
        nav_buttons(lesson, n, box)
