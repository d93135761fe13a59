"""Class mode, the lecturer's side: Reveal, Next, end; the join and lecturer links, the full-screen code and QR;
the live bar (counts, the answers' chart, the roster) and the sidebar's class section."""

from __future__ import annotations

import html
import os
import time
from typing import Any
from urllib.parse import quote

import sqlalchemy.exc
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from teaching.classroom.tables import summary
from teaching.classroom import ClassError
from ui.teaching import steps as lesson_ui
from ui.caches.classroom import store
from ui.escape import md
from ui.teaching.class_figures import distribution_bar
from ui.i18n import current_lang, t
from ui.share import is_local, qr_code, qr_html
from ui.teaching.class_results import answers_table, results_section
from ui.teaching.class_mode import (
    ENV_PUBLIC_URL, LECTURER_EVERY_S, MAX_POLL_OPTIONS, MAX_POLL_TEXT, PARAM_CODE, PARAM_SECRET, allow,
    class_state, code, error_text, forget, leave_class, role, say, seat, start_class, take,
)


# ---- the lecturer's controls ----------------------------------------------------------------------------------
def _control(action: str, question: str | None = None) -> bool:
    """Reveal (``question``) / open or close joining / end, checked by the store against the session's secret."""
    c, secret = code(), seat().secret
    if not allow("control"):
        return False
    try:
        if action == "reveal":
            store().reveal(c, secret, question)
        elif action == "joining":
            store().set_joining(c, secret, bool(st.session_state.get("class.joining", True)))
        elif action == "end":
            store().end(c, secret)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        say(error_text(err, c or ""))
        return False
    finally:
        forget(c or "")
    return True


def _next(drawn_for: Any) -> None:
    """Next (a callback): close the poll, or open the lesson's next step (its page, its settings) for everyone.
    ``drawn_for``: the poll's question id or the lesson step the button was drawn for; a click handled twice (or
    after another session moved the class) does nothing the second time."""
    seat().app_rerun = True
    poll = seat().poll
    if poll is not None:
        if poll.get("question") == drawn_for:
            take("poll")
        return
    a = lesson_ui.active()
    if a and lesson_ui.seat().active == drawn_for:
        lesson_ui.go(a[0].id, a[1] + 1)


def _reveal(drawn_for: str) -> None:
    """Reveal (a callback, so that a click is not lost when a loaded server cuts the fragment's run short, as a
    button's return value is): the question the button was drawn for, for good. When another tab's Next moved the
    class on first, that question is revealed all the same (Back finds it revealed) and the class's new question
    stays open: a reveal is never lost to a concurrent Next, nor given to the step after it."""
    if _control("reveal", drawn_for):
        seat().app_rerun = True  # the whole screen shows the reveal


def _base() -> str | None:
    """The address the lecturer's browser reached the server by (``EXPLORER_PUBLIC_URL`` instead, behind a proxy
    that rewrites it)."""
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
    return base.rstrip("/")


def join_link(class_code: str) -> str | None:
    """``<base>/join/CODE``: the students' light phone page (``ui/teaching/phone/``), not a Streamlit session."""
    base = _base()
    return None if base is None else f"{base}/join/{class_code}"


def lecturer_link(class_code: str, secret: str) -> str | None:
    """``<base>/?class=CODE&lecturer=SECRET``: the full app, as this class's lecturer (a second device)."""
    base = _base()
    return None if base is None else f"{base}/?{PARAM_CODE}={class_code}&{PARAM_SECRET}={quote(secret)}"


def _full_screen(class_code: str) -> None:
    link = join_link(class_code)

    def body() -> None:
        st.html(f'<div style="text-align:center;font:700 clamp(2.5rem,9vw,6rem) ui-monospace,monospace;'
                f'letter-spacing:0.15em">{html.escape(class_code)}</div>')
        qr = qr_code(link) if link else None
        if qr is not None:
            local = is_local(link)
            if local:  # above the code, so that it is on the projector's first screen (1280 x 720), not below it
                st.warning(t("share.qr_local", host=html.escape(link.split("/")[2])))
            st.html(qr_html(link, qr, "min(38vh, 80vw)" if local else "min(50vh, 80vw)", "clamp(1rem, 4vw, 2rem)"))

    st.dialog(t("class.qr_title"), width="large")(body)()


def draw_distribution(box, words, table, joined: int, revealed: bool, key: str) -> None:
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
    cached = seat().figure
    if cached is None or cached[0] != sig:
        cached = (sig, distribution_bar(table, revealed))
        seat().figure = cached
    with box:
        show_figure(cached[1], key)
    words.markdown(f"**{t('class.dist_title')}** · " + ("" if current_lang() == "zh" else " ").join(parts))


def page_hash() -> str | None:
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.page_script_hash if ctx else None


def page_moved() -> bool:
    """Whether this live bar's run was asked for from another page than the one the last whole run drew; then
    the session's lesson step is opened again, for the whole-app run the caller asks for.

    The browser's timer asks for the bar's rerun naming the page the browser is on. One sent while the server
    switched pages (the class's Next) names the old page and is run after the switch: Streamlit then takes the
    old page, and the old step's address, for the session's while the new page stays drawn, and nothing moved
    the page again (a loaded server left a screen on the old step's address). The whole-app run goes to the
    session's step, its settings applied again, not to the old address's step."""
    drawn = seat().page
    if drawn is None or drawn == page_hash():
        return False
    a = lesson_ui.seat().active
    if a:
        lesson_ui.go(a.lesson, a.step)
    return True


@st.fragment(run_every=LECTURER_EVERY_S)
def lecturer_live() -> None:
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
        st.warning(error_text(err, c))
        return
    drew = seat().drew_revealed
    if (state["step_seq"] != seat().synced_seq or take("app_rerun")
            or (drew is not None and state["revealed"] != drew) or page_moved()):
        st.rerun()  # another lecturer session moved the class or revealed, or Next: the whole screen takes it
    lang = current_lang()
    bar = st.container(border=True, key="class.bar")
    row = bar.container(horizontal=True, vertical_alignment="center", key="class.count")
    counted = (t("class.count", joined=counts["joined"], answered=counts["answered"]) if q
               else t("class.count_no_question", joined=counts["joined"]))
    pacing = t("class.pacing", on=counts["on_step"], joined=counts["joined"])
    row.markdown(t("class.code", code=c) + " · " + counted + " · " + pacing, help=t("class.pacing_help"))
    if q and not state["revealed"]:
        row.button(t("class.reveal"), key="class.reveal", type="primary", on_click=_reveal, args=(q,))
    poll = step.get("kind") == "poll"
    label = t("class.close_poll") if poll else t("class.next")
    row.button(label, key="class.next", disabled=not poll and lesson_ui.active() is None, on_click=_next,
               args=(step.get("question") if poll else lesson_ui.seat().active,))
    if not q:
        _roster(bar, c)
        return
    # the compact chart beside the numbers and the switches: on a 1280 x 720 projector the bar takes about a
    # third of the screen, the step's question and chart stay in view below
    chart_col, words_col = bar.columns([3, 2], vertical_alignment="top")
    # the lecturer's screen is often the room's: the answers so far can be kept off it until the reveal
    hidden = not state["revealed"] and not words_col.toggle(
        t("class.show_answers"), value=seat().show_answers, key="class.show_answers",
        on_change=_remember_show)  # the choice outlives the widget (drawn only while a question is open)
    table = None if hidden else answers_table(step, counts, state["revealed"], lang)
    if hidden:
        chart_col.caption(t("class.answers_hidden"))
    elif table is not None:
        draw_distribution(chart_col, words_col, table, counts["joined"], state["revealed"], "class.distribution")
    _roster(words_col, c)


def _remember_show() -> None:
    seat().show_answers = st.session_state["class.show_answers"]


def _roster(box, c: str) -> None:
    """Who joined (nicknames as plain text; never next to an answer), live in the lecturer's bar."""
    try:
        people = store().roster(c, seat().secret)
    except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
        box.caption(error_text(err, c))
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
        say(t("class.poll_bad"))
        return
    seq = int(time.time() * 1000) % 10**9
    poll = {"kind": "poll", "question": f"poll:{seq}", "prompt": question, "options": options,
            "page": st.session_state.get("state.page", "")}
    a = lesson_ui.seat().active
    if a:  # the lesson step the poll interrupts: the students keep it open (its question's chart stays hidden)
        poll.update(lesson=a.lesson, step=a.step)
    seat().poll = poll


def _end() -> None:
    c = code()
    if _control("end"):
        leave_class(t("class.ended_lecturer", code=md(c)))


def class_panel() -> None:
    """The sidebar's class section: start a class, or the way to the students' page; the lecturer's code, link,
    QR, poll, roster and End."""
    box = st.sidebar.expander(t("class.section"), expanded=role() is not None)
    if role() is None:
        box.button(t("class.start"), key="class.start", on_click=start_class, help=t("class.start_help"),
                   type="primary")
        box.markdown(t("class.join_here", url="/join"))
        return
    c = code()
    box.markdown(t("class.code", code=c))
    link = join_link(c)
    if link:
        qr = qr_code(link)
        if qr is not None:
            box.html(qr_html(link, qr, "100%", "0.8rem"))
    if box.button(t("class.qr"), key="class.qr", icon="📱", type="primary"):
        _full_screen(c)
    with box.expander(t("class.lecturer_link")):
        secret_link = lecturer_link(c, seat().secret or "")
        st.caption(t("class.lecturer_link_help"))
        with st.container(key="class.lecturer_link"):
            st.code(secret_link or "", language=None, wrap_lines=True)
    with box.expander(t("class.poll")):
        with st.form("class.poll_form", border=False):
            st.text_input(t("class.poll_question"), key="class.poll.question", max_chars=MAX_POLL_TEXT)
            st.text_area(t("class.poll_options"), key="class.poll.options", height=120)
            st.form_submit_button(t("class.poll_open"), key="class.poll.open", on_click=_open_poll)
    try:
        closed = class_state(c)["joins_closed"]
    except (ClassError, sqlalchemy.exc.SQLAlchemyError):
        closed = False
    box.toggle(t("class.joining"), value=not closed, key="class.joining", help=t("class.joining_help"),
               on_change=_control, args=("joining",))
    results_section(box, c)
    box.button(t("class.end"), key="class.end", on_click=_end, type="tertiary")


