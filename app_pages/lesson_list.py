"""Lessons: the list (length and this session's progress), and a finished lesson's summary with its misses."""

import streamlit as st

from teaching import lessons
from ui.i18n import current_lang, t
from ui.teaching.steps import active, go, progress, restart, score
from ui.sidebar import explorer

explorer()  # the shared sidebar (language, presenter mode, the model a step set up)
lang = current_lang()
found = active()

if found and found[1] > len(found[0].steps):  # the summary of the lesson just finished
    lesson = found[0]
    st.title(t("lessons.summary", title=lesson.title[lang]))
    right, total = score(lesson)
    st.subheader(t("lessons.score", right=right, total=total))
    answers = progress(lesson.id).answers
    missed = [s for s in lesson.steps if s.question and not answers.get(str(s.number), {}).get("right")]
    if not missed:
        st.success(t("lessons.all_right"))
    else:
        st.markdown(t("lessons.missed"))
        for s in missed:
            a = answers.get(str(s.number))
            how = "open" if a is None else "skipped" if a.get("skipped") else "wrong"
            row = st.container(horizontal=True, vertical_alignment="center")
            row.button(t("lessons.missed_item", n=s.number, concept=s.question.concept[lang], how=t(f"lessons.how.{how}")),
                       key=f"lessons.goto.{s.number}", on_click=go, args=(lesson.id, s.number), icon="↩️")
    row = st.container(horizontal=True)
    row.button(t("lessons.back"), key="lessons.back", on_click=go, args=(lesson.id, len(lesson.steps)), shortcut="PageUp")
    row.button(t("lessons.restart"), key=f"lessons.restart.{lesson.id}", on_click=restart, args=(lesson.id,))
    st.divider()

st.title(t("lessons.title"))
st.markdown(t("lessons.intro"))
all_lessons = [lesson for lesson in lessons.load_all() if not lesson.draft] or list(lessons.load_all())
if not all_lessons:
    st.info(t("lessons.none"))
for lesson in all_lessons:
    box = st.container(border=True, key=f"lessons.card.{lesson.id}")
    box.subheader(lesson.title[lang])
    box.markdown(lesson.summary[lang])
    meta = dict(steps=len(lesson.steps), questions=lesson.questions)
    box.caption(t("lessons.meta", source=lesson.source[lang], **meta) if lesson.source else t("lessons.meta_plain", **meta))
    p = progress(lesson.id)
    right, _ = score(lesson)
    row = box.container(horizontal=True, vertical_alignment="center")
    if p.done:
        row.button(t("lessons.see_summary"), key=f"lessons.open.{lesson.id}", type="primary", on_click=go,
                   args=(lesson.id, len(lesson.steps) + 1))
        row.button(t("lessons.restart"), key=f"lessons.again.{lesson.id}", on_click=restart, args=(lesson.id,))
        row.caption(t("lessons.done", right=right, questions=lesson.questions))
    elif p.step:
        row.button(t("lessons.continue", n=p.step), key=f"lessons.open.{lesson.id}", type="primary", on_click=go,
                   args=(lesson.id, p.step))
        row.button(t("lessons.restart"), key=f"lessons.again.{lesson.id}", on_click=restart, args=(lesson.id,))
        row.caption(t("lessons.at", n=p.step, total=len(lesson.steps), right=right, answered=len(p.answers)))
    else:
        row.button(t("lessons.start"), key=f"lessons.open.{lesson.id}", type="primary", on_click=go, args=(lesson.id, 1))
        row.caption(t("lessons.not_started"))
