"""The class's answers as a table (teaching/classroom/tables.py), against hand-counted distributions."""

from __future__ import annotations

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
