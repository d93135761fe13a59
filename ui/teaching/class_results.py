"""A class's results to keep (the lecturer's sidebar): every question asked, in order, with how the class answered,
how many were right and the concept it tested, as a CSV file and as a self-contained HTML report (no script, no
font or file from another host: it opens offline). From the store's record, during the class or after it ended,
until the class expires. No names."""

from __future__ import annotations

import html
import time

import pandas as pd
import sqlalchemy.exc
import streamlit as st

from teaching.classroom import ClassError
from teaching.classroom.tables import RESULT_COLUMNS, choice_table, estimate_table, results_table
from ui.caches.classroom import store
from ui.i18n import current_lang, t
from ui.teaching import steps as lesson_ui
from ui.teaching.class_hooks import step_of
from ui.teaching.class_mode import error_text, seat


def answers_table(step: dict, counts: dict, revealed: bool, lang: str):
    """The answers' table for the open question (None when there is none, or its key cannot be computed)."""
    dist = counts["distribution"]
    if step.get("kind") == "poll":
        return choice_table(list(step.get("options", [])), dist)
    found = step_of(step)
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


def describe(step: dict, lang: str) -> tuple[str, str]:
    """A question's prompt and concept in ``lang``: the lesson step's, or a quick poll's prompt."""
    found = step_of(step)
    if found and found[1].question is not None:
        q = found[1].question
        return q.prompt[lang], q.concept[lang]
    return str(step.get("prompt") or step.get("question") or ""), ""


def results_frame(results: dict, lang: str) -> pd.DataFrame:
    """The store's ``results()`` as the table the files hold, its columns named in ``lang``."""
    frame = results_table(results, lambda step, counts: answers_table(step, counts, True, lang),
                          lambda step: describe(step, lang))
    frame["right_share"] = frame["right_share"].map(lambda v: None if v is None or pd.isna(v) else round(v, 3))
    frame["right"] = frame["right"].astype("Int64")  # a count (none for a poll), not 3.0
    frame["revealed"] = frame["revealed"].map(lambda v: t("class.results.yes") if v else t("class.results.no"))
    return frame.rename(columns={c: t(f"class.results.col.{c}") for c in RESULT_COLUMNS})


def report_html(frame: pd.DataFrame, code: str, lang: str) -> str:
    """The results as one HTML page: a title, when it was made, and the table with a bar for each share right."""
    share_col, right_col = t("class.results.col.right_share"), t("class.results.col.right")
    rows = []
    for _, r in frame.iterrows():
        cells = []
        for col, v in r.items():
            text = "—" if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)) else v
            if col == share_col and text != "—":
                pct = 100 * float(v)
                text = (f'<div class="bar"><span style="width:{pct:.0f}%"></span></div>{pct:.0f} %')
                cells.append(f"<td>{text}</td>")
                continue
            if col == right_col and text != "—":
                text = int(text)
            cells.append(f"<td>{html.escape(str(text))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    title = t("class.results.title", code=code)
    made = t("class.results.made", when=time.strftime("%Y-%m-%d %H:%M"))
    return f"""<!DOCTYPE html>
<html lang="{'zh' if lang == 'zh' else 'en'}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: "Noto Sans", "Noto Sans CJK SC", system-ui, sans-serif; margin: 2rem; color: #1f2937; }}
table {{ border-collapse: collapse; width: 100%; font-size: 0.95rem; }}
th, td {{ border: 1px solid #d1d5db; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }}
th {{ background: #f3f4f6; }}
.bar {{ display: inline-block; width: 6rem; height: 0.7rem; background: #e5e7eb; margin-right: 0.4rem; }}
.bar span {{ display: block; height: 100%; background: #16a34a; }}
</style></head><body>
<h1>{html.escape(title)}</h1><p>{html.escape(made)}</p>
<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>
</body></html>"""


MADE = "class.results.made"  # session state: (class code, language, rows, CSV bytes, HTML bytes) last prepared


def results_section(box, c: str) -> None:
    """The lecturer's "Results" section: prepare the files, then download them (CSV and HTML)."""
    with box.expander(t("class.results")):
        st.caption(t("class.results_help"))
        lang = current_lang()
        if st.button(t("class.results_make"), key="class.results.make"):
            try:
                with st.spinner(t("class.results_making")):
                    frame = results_frame(store().results(c, seat().secret), lang)
            except (ClassError, sqlalchemy.exc.SQLAlchemyError) as err:
                st.warning(error_text(err, c))
                return
            files = (frame.to_csv(index=False).encode("utf-8-sig"), report_html(frame, c, lang).encode("utf-8"))
            st.session_state[MADE] = (c, lang, len(frame), *files)  # kept: a rerun must not take the downloads away
        made = st.session_state.get(MADE)
        if made is None or made[:2] != (c, lang):  # none made yet for this class (or in this language): the button
            return
        _, _, n, csv_bytes, html_bytes = made
        st.caption(t("class.results_ready", n=n))
        stem = f"class-{c}-results"
        st.download_button(t("class.results_csv"), csv_bytes, file_name=f"{stem}.csv", mime="text/csv",
                           key="class.results.csv", on_click="ignore")
        st.download_button(t("class.results_html"), html_bytes, file_name=f"{stem}.html", mime="text/html",
                           key="class.results.html", on_click="ignore")
