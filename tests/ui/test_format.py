"""ui/format.py, the one number formatter: hand-computed strings, and never a number for NaN / inf."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ui.format import DASH, cells, duration, finite, number, percent, scientific

NOT_FINITE = [None, math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("-inf"), "abc"]


@pytest.mark.parametrize("v", NOT_FINITE)
def test_not_a_finite_number_is_a_dash_everywhere(v):
    assert not finite(v)
    assert number(v) == number(v, ".1e") == percent(v) == duration(v) == scientific(v) == DASH == "—"


@pytest.mark.parametrize("v, spec, text", [
    (3.14159, ".3f", "3.142"),
    (3.14159, ".3g", "3.14"),
    (0.000123456, ".3g", "0.000123"),
    (123456.7, ".3g", "1.23e+05"),
    (24242.4, ",.0f", "24,242"),  # thousands separators where a page asks for them
    (1234567, ",.0f", "1,234,567"),
    (-0.0, ".3f", "-0.000"),  # Python's own rule for a negative zero: the sign stays
    (0.123, ".1%", "12.3%"),
    (-0.25, "+.2f", "-0.25"),
    (0.25, "+.2f", "+0.25"),
    (np.float32(0.5), ".3f", "0.500"),
    (7, ".3f", "7.000"),
])
def test_number(v, spec, text):
    assert number(v, spec) == text


def test_number_default_is_three_decimals():
    assert number(2.0 / 3.0) == "0.667"


@pytest.mark.parametrize("v, text", [(0.0, "0"), (-0.0, "0"), (3.2e-7, "3.2e-07"), (1.0, "1.0e+00")])
def test_scientific(v, text):
    assert scientific(v) == text


@pytest.mark.parametrize("p, text", [
    (0.5, "50.0%"), (0.01, "1.0%"), (0.00999, "0.999%"), (1e-5, "0.001%"), (9.9e-6, "9.9e-06"), (0.0, "0%"), (-0.0, "0%"),
])
def test_percent_keeps_digits_for_tiny_probabilities(p, text):
    assert percent(p) == text


@pytest.mark.parametrize("s, en, zh", [
    (4.24, "4.2 s", "4.2 秒"),
    (9.96, "10.0 s", "10.0 秒"),  # below 10 s: one decimal, rounded as it prints
    (42.4, "42 s", "42 秒"),
    (59.6, "1:00", "1:00"),  # rounds to 60 s: minutes from there
    (61, "1:01", "1:01"),
    (3725, "62:05", "62:05"),
])
def test_duration_in_both_languages(s, en, zh):
    assert duration(s, lang="en") == en
    assert duration(s, lang="zh") == zh


def test_cells_leave_non_finite_cells_empty():
    z = np.array([[0.5, np.nan], [np.inf, 1.0 / 3.0]])
    assert cells(z, ".2f") == [["0.50", ""], ["", "0.33"]]
