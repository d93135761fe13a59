"""analysis/compare.py, the head roles / RoPE / interventions / experts block: each number against a hand-computed
value or the single view's own table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import compare

NAN = float("nan")


def test_layer_grid_is_the_table_layer_by_layer():
    table = pd.DataFrame({"layer": [1, 0, 1, 0], "head": [0, 1, 1, 0], "score": [3.0, 2.0, 4.0, 1.0]})
    assert np.array_equal(compare.layer_grid(table, "score"), [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("la, lb, want", [
    (2, 2, [(0, 0), (1, 1)]),
    (2, 3, [(0, 0), (1, 2)]),  # middles 1/4 and 3/4 of B's 3 layers: layers 0 (0..1/3) and 2 (2/3..1)
    (3, 2, [(0, 0), (2, 1)]),
    (1, 4, [(0, 2)]),  # the middle, 1/2, starts B's layer 2 (2/4..3/4)
    (2, 30, [(0, 7), (1, 22)]),  # 7.5 and 22.5 of 30
])
def test_depth_pairs_meet_at_the_same_relative_depth(la, lb, want):
    assert compare.depth_pairs(la, lb) == want


def test_the_grid_difference_pairs_rows_by_depth():
    a = np.array([[0.5, 0.2], [0.1, 0.9]])
    b = np.array([[0.4, 0.2], [0.0, 0.0], [0.3, 0.1]])
    diff, rows = compare.grid_difference(a, b)
    assert rows == [(0, 0), (1, 2)]
    assert np.allclose(diff, [[0.1, 0.0], [-0.2, 0.8]])
    assert compare.grid_difference(a, np.zeros((2, 3))) is None  # other head counts: no order in common


def test_the_largest_cell_change_and_its_two_scores():
    a = np.array([[0.5, 0.2], [0.1, 0.9]])
    b = np.array([[0.4, 0.2], [0.0, 0.0], [0.3, 0.1]])
    assert compare.largest_cell_change(a, b) == compare.CellChange(1, 2, 1, 0.9, 0.1)
    assert compare.largest_cell_change(a, a) == compare.CellChange(0, 0, 0, 0.5, 0.5)  # no change: the first cell
    assert compare.largest_cell_change(np.full((2, 2), NAN), a) is None
    assert compare.largest_cell_change(a, np.zeros((2, 3))) is None


def test_top_cell_skips_nan_and_takes_the_first_on_a_tie():
    grid = np.array([[NAN, 0.7], [0.7, 0.1]])
    assert compare.top_cell(grid) == (0, 1, 0.7)
    assert compare.top_cell(grid, lowest=True) == (1, 1, 0.1)
    assert compare.top_cell(np.full((1, 2), NAN)) is None


def _waves(planes: list[float], local: list[float] | None = None) -> pd.DataFrame:
    """A wavelengths table (``analysis.rope.wavelengths``'s columns) of a main base and maybe a local one."""
    rows = [dict(base=10_000.0, plane=i, wavelength=w) for i, w in enumerate(planes)]
    rows += [dict(base=10.0, plane=i, wavelength=w) for i, w in enumerate(local or [])]
    return pd.DataFrame(rows)


def test_plane_ratio_is_b_over_a_at_the_main_base():
    table = compare.plane_ratio(_waves([6.0, 60.0], local=[1.0, 2.0]), _waves([12.0, 30.0]))
    assert table["plane"].tolist() == [0, 1] and table["ratio"].tolist() == [2.0, 0.5]
    assert compare.plane_ratio(_waves([6.0, 60.0]), _waves([6.0, 60.0, 600.0])) is None


def test_distance_difference_over_the_distances_both_have():
    a = pd.DataFrame({"distance": [0, 1, 2], "mean": [1.0, 0.5, 0.25]})
    b = pd.DataFrame({"distance": [0, 1], "mean": [0.75, 1.0]})
    table = compare.distance_difference(a, b)
    assert table["distance"].tolist() == [0, 1] and table["difference"].tolist() == [0.25, -0.5]


def test_load_difference_is_a_minus_b_of_the_shares():
    a = pd.DataFrame({"expert": [0, 1, 2], "share": [0.5, 1.0, 0.5]})
    b = pd.DataFrame({"expert": [0, 1, 2], "share": [0.25, 0.75, 1.0]})
    assert compare.load_difference(a, b)["difference"].tolist() == [0.25, 0.25, -0.5]
    assert compare.load_difference(a, b.iloc[:2]) is None
