"""A colour bar's tick labels carry the digits its range needs (issue 35: ±0.004 read "0.00/−0.00").

``colorbar_ticks`` is checked against hand-computed ranges and, for any range, against properties: two different
tick values never share a label, no label is a negative zero, each label reads back as its value, the ticks lie
in the range and step evenly. ``readable_colorbars`` is checked on figures: the range a heatmap shows (zmin/zmax,
its data, symmetric about zmid), a colour axis, and colour bars that already have ticks left alone.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.figures.common import MINUS, colorbar_ticks, readable_colorbars

M = MINUS


@pytest.mark.parametrize(("lo", "hi", "texts"), [
    (-0.004, 0.004, [f"{M}0.004", f"{M}0.002", "0", "0.002", "0.004"]),  # step (0.008 / 5 = 0.0016 ->) 0.002
    (-0.0004, 0.0004, [f"{M}0.0004", f"{M}0.0002", "0", "0.0002", "0.0004"]),
    (-4e-6, 4e-6, [f"{M}4e-06", f"{M}2e-06", "0", "2e-06", "4e-06"]),  # below 0.0001: exponents
    (-0.03, 0.03, [f"{M}0.02", "0", "0.02"]),  # 0.06 / 5 = 0.012 -> step 0.02
    (0.0, 1.0, ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]),
    (-123.0, 123.0, [f"{M}100", f"{M}50", "0", "50", "100"]),  # 246 / 5 = 49.2 -> step 50
    (1.5, 1.5001, ["1.50000", "1.50002", "1.50004", "1.50006", "1.50008", "1.50010"]),  # a tiny range far from 0
])
def test_hand_computed_ranges(lo, hi, texts):
    assert colorbar_ticks(lo, hi)[1] == texts


def test_no_range_no_ticks():
    assert colorbar_ticks(1.0, 1.0) == ([], []) and colorbar_ticks(0.0, math.inf) == ([], [])


def read_back(text: str) -> float:
    return float(text.replace(MINUS, "-"))


@settings(max_examples=400, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(1e-7, 1e6, allow_nan=False))
def test_labels_are_distinct_and_true(centre, span):
    lo, hi = centre - span / 2, centre + span / 2
    if span < 1e-6 * abs(centre):  # finer than float32 data (7 digits) can differ: not a range a chart shows
        return
    values, texts = colorbar_ticks(lo, hi)
    assert 2 <= len(values) <= 11, (lo, hi, texts)
    assert len(set(texts)) == len(texts), texts  # two values, two labels
    assert not any(t.startswith(("-", MINUS)) and read_back(t) == 0 for t in texts), texts  # no "−0.00"
    assert "-" not in [t[:1] for t in texts]  # Plotly's minus sign, not a hyphen
    step = values[1] - values[0]
    for v, t in zip(values, texts):
        assert lo - step * 1e-6 <= v <= hi + step * 1e-6
        assert abs(read_back(t) - v) <= step * 1e-3, (v, t)
    assert all(abs((b - a) - step) <= step * 1e-6 for a, b in zip(values, values[1:]))


def ticks_of(cb) -> list[str]:
    return list(cb.ticktext) if cb.ticktext is not None else []


def test_a_heatmap_centred_at_zero_is_ticked_over_its_symmetric_range():
    z = np.array([[-0.001, 0.0], [0.002, 0.004]], dtype=np.float32)  # zmid 0: Plotly shows −0.004 .. 0.004
    fig = readable_colorbars(go.Figure(go.Heatmap(z=z, zmid=0.0)))
    assert ticks_of(fig.data[0].colorbar) == [f"{M}0.004", f"{M}0.002", "0", "0.002", "0.004"]


def test_zmin_zmax_a_colour_axis_and_own_ticks():
    fig = go.Figure([go.Heatmap(z=[[0.5]], zmin=0.0, zmax=0.001),
                     go.Heatmap(z=[[1.0]], colorbar=dict(tickvals=[0, 1], ticktext=["a", "b"])),
                     go.Heatmap(z=[[1.0]], coloraxis="coloraxis")])
    fig.update_layout(coloraxis=dict(cmin=-0.0004, cmax=0.0004))
    readable_colorbars(fig)
    assert ticks_of(fig.data[0].colorbar) == ["0", "0.0002", "0.0004", "0.0006", "0.0008", "0.0010"]
    assert ticks_of(fig.data[1].colorbar) == ["a", "b"]  # a log scale's own ticks stay
    assert ticks_of(fig.layout.coloraxis.colorbar)[0] == f"{M}0.0004"
