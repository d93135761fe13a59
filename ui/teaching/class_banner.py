"""Class mode above the lecturer's page: the class step's question, its options until the reveal and the answer
after it, a quick poll, the class's messages, and the scripts a run sends (the lecturer's HttpOnly cookie set by
the server, a join link sent on to the phone page). The students' side is the phone page (ui/teaching/phone/)."""

from __future__ import annotations

import json
import time

import sqlalchemy.exc
import streamlit as st

from teaching.classroom import ClassError
from ui.teaching.lesson_banner import nav_buttons, scroll_to_chart, scroll_to_step
from ui.teaching.gate import GATE_TEXT_KEY
from ui.escape import md
from ui.i18n import current_lang, t
from ui.teaching import steps as lesson_ui
from ui.teaching.class_mode import ROOT_PAGES, class_state, code, role, seat, take
from ui.teaching.class_hooks import step_of
from ui.teaching.class_lecturer import lecturer_live, page_hash

QUESTION_BOX = "class.question"


def _messages() -> None:
    """The session's class messages above the page; each new one also as a toast (the class ended, joining
    closed, the store retrying)."""
    now = time.monotonic()
    msgs = {text: until for text, until in seat().messages.items() if until > now}
    seat().messages = msgs
    if msgs:
        st.warning("\n\n".join(msgs))
    for text in msgs.keys() - seat().toasted:
        st.toast(text, icon="🧑‍🏫")
    seat().toasted = set(msgs)


# The lecturer's credential, set by the server as an HttpOnly, SameSite cookie (no page script can read it): the
# page asks the phone page's route to set it, with the secret this session already holds (it is checked there).
LECTURER_COOKIE_JS = """<script>fetch({url}, {{method: "POST", credentials: "same-origin",
  headers: {{"Content-Type": "application/json"}}, body: JSON.stringify({{secret: {secret}}})}});</script>"""
REDIRECT_JS = "<script>window.location.replace({url});</script>"


def _scripts() -> None:
    """This run's scripts, in one hidden box (after the hooks' page switches, which drop what a run drew before
    them): the lecturer's cookie (a reload or a restarted server comes back as the lecturer), and a join link
    opened here sent on to the phone page."""
    bodies = []
    cookie = take("set_cookie")
    if cookie:
        c, _, secret = cookie.partition(":")
        bodies.append(LECTURER_COOKIE_JS.format(url=json.dumps(f"/join/api/{c}/lecturer"), secret=json.dumps(secret)))
    target = take("redirect")
    if target:
        bodies.append(REDIRECT_JS.format(url=json.dumps(target)))
    if bodies:
        st.container(key="class.scripts").html("<style>.st-key-class-scripts { display: none; }</style>"
                                               + "".join(bodies), unsafe_allow_javascript=True)


def class_banner(here: str) -> bool:
    """explorer.py, instead of the lesson banner while in a class: the lecturer's bar (live) and the class step's
    question and reveal. False when the lesson banner should be drawn as usual (no class)."""
    if here in ROOT_PAGES:
        return False  # the hidden root page switches to the first page at once: draw there, not here
    r = role()
    seat().page = page_hash()
    # the live bar is the page's first element in every run: a fragment's id is its place on the page, and a run
    # that drew a message or a script above it gave it another id; the server drops a click or a timer's rerun
    # addressed to an id it no longer holds
    if r == "lecturer":
        lecturer_live()
    _scripts()
    _messages()
    if r is None:
        st.session_state.pop(GATE_TEXT_KEY, None)
        return False
    st.session_state[GATE_TEXT_KEY] = "class.predict_first"
    try:
        state = class_state(code())
    except (ClassError, sqlalchemy.exc.SQLAlchemyError):
        return False
    step = state["step"] or {}
    lang = current_lang()
    if step.get("kind") == "poll":
        _poll_banner(step)
        return True  # the lesson's banner waits until the poll is closed
    found = step_of(step)
    if found is None or found[1].page != here:
        return False
    lesson, s = found
    if s.question is None:
        return False  # a step without a question: the lesson's banner, as for one learner
    _lesson_banner(lesson, s, state, lang)
    return True


def _poll_banner(step: dict) -> None:
    box = st.container(border=True, key=QUESTION_BOX)
    box.markdown(t("class.poll_line", prompt=md(step.get("prompt", ""))))
    box.markdown(" · ".join(f"**{chr(65 + i)}** {md(o)}" for i, o in enumerate(step.get("options", []))))


def _lesson_banner(lesson, s, state: dict, lang: str) -> None:
    """A class's lesson step with a question: its text, then the options until the reveal; after it the answer and
    the explanation (the class's answers are in the live bar, the step's chart below)."""
    scroll_to_step(lesson, s)  # once per step: the bar and the question on the first screen
    box = st.container(border=True, key=QUESTION_BOX)
    n = s.number
    box.progress(n / len(lesson.steps), text=t("lessons.progress", title=lesson.title[lang], n=n,
                                               total=len(lesson.steps)))
    box.markdown(s.text[lang])
    q = s.question
    box.markdown(f"**{q.prompt[lang]}**")
    try:
        key = lesson_ui.frozen_key(lesson, s)
    except Exception as err:  # noqa: BLE001 -- a broken key must not hide the page
        box.error(t("lessons.key_failed", error=str(err)))
        return
    labels = [o[lang] for o in key.options] if key.kind == "choice" else []
    right_text = key.options[key.correct][lang] if key.kind == "choice" else key.values[lang]["answer"]
    if not state["revealed"]:
        box.markdown(" · ".join(f"**{chr(65 + i)}** {label}" for i, label in enumerate(labels)) if labels
                     else t("lessons.estimate_within", within=q.within))
        nav_buttons(lesson, n, box)
        return
    box.success(t("class.reveal_answer", answer=right_text))
    box.markdown(key.explanation(q, lang))
    scroll_to_chart(lesson, s)  # once: the revealed chart into view
    nav_buttons(lesson, n, box)
