"""The tall-heatmap window (ui/window.py) against a brute-force reference."""

import pytest

from ui.window import READABLE_CELL_PX, rows_that_fit, window


@pytest.mark.parametrize("px,min_px,want", [(230, 16, 14), (16, 16, 1), (15.9, 16, 1), (0, 16, 1), (600, 16, 37)])
def test_rows_that_fit(px, min_px, want):
    assert rows_that_fit(px, min_px) == want


@pytest.mark.parametrize("n", range(1, 50))
@pytest.mark.parametrize("px", [10, 100, 230, 420, 800])
def test_window_properties(n, px):
    size = rows_that_fit(px)
    lo, hi = window(n, size)
    drawn = hi - lo
    assert hi == n  # the default includes the end (latest position, deepest layer)
    assert drawn == min(n, size)
    assert drawn == 1 or px / drawn >= READABLE_CELL_PX  # never below the minimum (one row: whatever there is)
    covered = set()
    for start in range(-3, n + 3):  # moving the window (out-of-range starts clamp) shows every row
        a, b = window(n, size, start)
        assert 0 <= a < b <= n and b - a == drawn
        covered |= set(range(a, b))
    assert covered == set(range(n))


def test_all_fit_is_everything():
    assert window(10, 40) == (0, 10)
    assert window(10, 40, start=5) == (0, 10)
