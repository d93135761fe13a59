"""Windows on tall heatmaps: how many rows (or columns) fit the pixels a chart is given at a readable minimum,
and which of them are drawn. One rule for every heatmap with many rows (the logit lens's depths, attention's
queries and keys); pure functions, no Streamlit.
"""

from __future__ import annotations

READABLE_CELL_PX = 16  # a labelled heatmap cell is never thinner than this (1280 x 720 projector, 390 x 844 phone)
# A colour-only cell (no text in it: a layers x heads map of the whole model, SmolLM2's 30 x 9 at 7-12 px rows on a
# projector page; its numbers, when a cell is too low for them, are in the hover) is read by its colour as a stripe
# and by its tick labels, which are thinned (ui.figures.common.layer_ticks) to stay 16 px or more apart: it is
# never thinner than this.
COLOUR_CELL_PX = 6
# The plot area (figure less its title, tick labels and margins) a page's main heatmap gets in presenter mode on a
# 1280 x 720 screen, measured with SmolLM2 on the lens and attention pages (tests/browser/
# test_browser_heatmap_rows.py): 63-64 px, the rest of the screen goes to the page's head, controls and the figure's
# two-line title and slanted token labels. Three rows fit at 16 px.
PRESENTER_HEATMAP_PX = 60
# And its plot width, for a window of columns (attention's keys): measured with SmolLM2, whose long token labels
# and colour bar leave 575 px of the 1280-pixel screen.
PRESENTER_HEATMAP_W = 560
# One side's plot width when two heatmaps share the screen (Compare: A and B side by side, each in half the main
# area less its tick labels and colour bar; 185 px measured at 1280 x 720): the compared maps show a square window
# of as many positions as fit across in colour-only cells (29 at COLOUR_CELL_PX; their numbers in the hover), not
# the 3 rows of the single map's first-screen height, nor numbers wider than their cells.
COMPARE_HEATMAP_W = 176


def rows_that_fit(available_px: float, min_px: float = READABLE_CELL_PX) -> int:
    """How many rows of at least ``min_px`` fit ``available_px`` (at least one: a chart always shows something)."""
    return max(1, int(available_px // min_px))


def window(n: int, size: int, start: int | None = None) -> tuple[int, int]:
    """The rows ``[lo, hi)`` drawn of ``n`` when ``size`` fit: all of them when they fit; else ``size`` rows from
    ``start`` (clamped into range), by default the last ``size`` (the latest positions, the deepest layers)."""
    size = max(1, min(size, n))
    last = n - size
    lo = last if start is None else min(max(int(start), 0), last)
    return lo, lo + size
