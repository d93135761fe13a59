"""The class's answers as a table (teaching/classroom/tables.py), against hand-counted distributions."""

from __future__ import annotations

import pandas as pd
import pytest

from teaching.classroom.tables import choice_table, estimate_table, summary

BANDS = {"too_low": "low", "within": "ok", "too_high": "high"}


def test_choice_table_counts_each_option_in_order_and_drops_what_is_no_option():
    # what the store's counts() gives: {value: n}; 7 and "x" and True are no option's index (forged or stale)
    table = choice_table(["A", "B", "C"], {0: 2, 2: 5, 7: 3, "x": 1, True: 4}, correct=2)
    assert table["answer"].tolist() == ["A", "B", "C"]
    assert table["students"].tolist() == [2, 0, 5]
    assert table["right"].tolist() == [False, False, True]
    s = summary(table, joined=9)
    assert (s["answered"], s["joined"], s["top"], s["top_n"]) == (7, 9, "C", 5)
    assert s["top_share"] == pytest.approx(5 / 7) and s["right"] == 5 and s["right_share"] == pytest.approx(5 / 7)


def test_a_poll_has_no_right_answer_and_a_tie_has_no_top():
    s = summary(choice_table(["yes", "no"], {0: 3, 1: 3}), joined=6)
    assert s["answered"] == 6 and s["top"] is None and s["right"] is None


def test_nobody_answered():
    s = summary(choice_table(["yes", "no"], {}), joined=4)
    assert (s["answered"], s["top"], s["right"], s["right_share"]) == (0, None, None, None)


def test_estimates_fall_in_three_bands_around_the_answer():
    # answer 10, tolerance 1: 8.9 low, 9 and 11 within (edges included), 11.5 high; "x" and None not counted
    table = estimate_table({8.9: 1, 9: 2, 10.0: 1, 11: 1, 11.5: 3, "x": 2, None: 1}, correct=10.0,
                           right=lambda v: abs(v - 10.0) <= 1.0, labels=BANDS)
    assert table["answer"].tolist() == ["low", "ok", "high"]
    assert table["students"].tolist() == [1, 4, 3]
    assert table["right"].tolist() == [False, True, False]
    assert summary(table, joined=10)["right"] == 4


def test_the_results_table_counts_every_question_in_order_and_its_share_right():
    """The lecturer's record (teaching.classroom.tables.results_table) from the store's results(): a lesson
    question graded by its key (options 0..2, the key 1) and a poll (no key): counts by hand."""
    from teaching.classroom.tables import results_table

    results = {"joined": 5, "questions": [
        {"question": "numpy_decoder:1", "step": {"kind": "lesson"}, "revealed": True, "answered": 4,
         "distribution": {0: 1, 1: 3}},
        {"question": "poll:1", "step": {"kind": "poll", "prompt": "Ready?", "options": ["yes", "no"]},
         "revealed": False, "answered": 2, "distribution": {1: 2}}]}

    def table_for(step, counts):
        if step["kind"] == "poll":
            return choice_table(step["options"], counts["distribution"])
        return choice_table(["a", "b", "c"], counts["distribution"], correct=1)

    frame = results_table(results, table_for, lambda step: (step.get("prompt", "Which?"), ""))
    assert frame["n"].tolist() == [1, 2] and frame["question"].tolist() == ["numpy_decoder:1", "poll:1"]
    assert frame["answered"].tolist() == [4, 2] and frame["joined"].tolist() == [5, 5]
    assert frame.loc[0, "right"] == 3 and frame.loc[0, "right_share"] == 0.75  # 3 of the 4 answers
    assert pd.isna(frame.loc[1, "right"]) and pd.isna(frame.loc[1, "right_share"])  # a poll has no key
    assert frame["answers"].tolist() == ["a: 1; b: 3; c: 0", "yes: 0; no: 2"]
    assert frame.loc[1, "prompt"] == "Ready?"
