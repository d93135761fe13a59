"""A class's answers to one question as a table: one row per option (or, for an estimate, per band around the
answer), the number of students who gave it, and whether it is right. No names: the class store only counts.

The distribution is the class store's ``counts()["distribution"]``: ``{answer value: number of students}``, where a
choice's value is the option's index and an estimate's value is the number typed.
"""

from __future__ import annotations

import numbers
from typing import Callable

import pandas as pd

BANDS = ("too_low", "within", "too_high")


def choice_table(labels: list[str], distribution: dict, correct: int | None = None) -> pd.DataFrame:
    """One row per option, in the options' order: ``answer`` (its label), ``students``, ``right`` (None for a poll).
    A value that is no option's index (a forged or stale answer) is not counted."""
    counts = [0] * len(labels)
    for value, n in distribution.items():
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value < len(labels):
            counts[value] += int(n)
    right = [None if correct is None else i == correct for i in range(len(labels))]
    return pd.DataFrame({"answer": labels, "students": counts, "right": right})


def estimate_table(distribution: dict, correct: float, right: Callable[[float], bool], labels: dict[str, str]
                   ) -> pd.DataFrame:
    """Three rows: estimates the key grades right (``right(value)``: the lesson's one grader), and the others below
    or above ``correct``. ``labels``: each band's name (``too_low``, ``within``, ``too_high``). Values that are not
    numbers are not counted."""
    counts = dict.fromkeys(BANDS, 0)
    for value, n in distribution.items():
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            continue
        band = "within" if right(float(value)) else "too_low" if value < correct else "too_high"
        counts[band] += int(n)
    return pd.DataFrame({"answer": [labels[b] for b in BANDS], "students": [counts[b] for b in BANDS],
                         "right": [b == "within" for b in BANDS]})


def summary(table: pd.DataFrame, joined: int) -> dict:
    """The numbers a sentence about the chart states: ``answered``, ``joined``, the most picked answer ``top`` with
    its count ``top_n`` and share (None when nobody answered or two answers tie for the most), ``right`` and its
    share of the answers (None for a poll)."""
    answered = int(table["students"].sum())
    out = {"answered": answered, "joined": int(joined), "top": None, "top_n": 0, "top_share": None,
           "right": None, "right_share": None}
    if answered:
        most = int(table["students"].max())
        leaders = table.loc[table["students"] == most, "answer"].tolist()
        if len(leaders) == 1:
            out.update(top=leaders[0], top_n=most, top_share=most / answered)
        if table["right"].notna().all():
            right = int(table.loc[table["right"].astype(bool), "students"].sum())
            out.update(right=right, right_share=right / answered)
    return out


RESULT_COLUMNS = ["n", "question", "prompt", "concept", "revealed", "answered", "joined", "right", "right_share",
                  "answers"]


def results_table(results: dict, table_for: Callable[[dict, dict], pd.DataFrame | None],
                  describe: Callable[[dict], tuple[str, str]]) -> pd.DataFrame:
    """The lecturer's record of a class (the store's ``results()``) as one row per question asked, in order:
    ``n``, the question id, its ``prompt`` and ``concept`` (``describe(step)``: the lesson's words, or a poll's
    prompt and ""), ``revealed``, how many ``answered`` of the ``joined``, how many were ``right`` and their share
    of the answers (None for a poll, or when the key is not known), and ``answers``: every option with its count
    ("yes: 12; no: 3"), from ``table_for(step, counts)`` (the live bar's table: a choice's options, an estimate's
    bands; None when the step is no longer known). No names."""
    rows = []
    for n, q in enumerate(results["questions"], 1):
        prompt, concept = describe(q["step"])
        table = table_for(q["step"], q)
        s = summary(table, results["joined"]) if table is not None else {"right": None, "right_share": None}
        answers = ("; ".join(f"{a}: {k}" for a, k in zip(table["answer"], table["students"])) if table is not None
                   else "; ".join(f"{v}: {k}" for v, k in q["distribution"].items()))
        rows.append({"n": n, "question": q["question"], "prompt": prompt, "concept": concept,
                     "revealed": q["revealed"], "answered": q["answered"], "joined": results["joined"],
                     "right": s["right"], "right_share": s["right_share"], "answers": answers})
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
