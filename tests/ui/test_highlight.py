"""The reveal's outline (``ui.teaching.highlight.highlight``): a tie outlines every tied bar, each at its own x."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.teaching.highlight import highlight


def test_a_tie_outlines_each_tied_bar_and_one_answer_one_bar():
    walk = pd.DataFrame({"step": [1, 2, 3, 4, 5], "mean_norm": [0.1, 3.99, 0.2, 0.3, 3.99]})
    fig = go.Figure(go.Bar(x=walk["step"], y=walk["mean_norm"]))
    highlight(fig, {"x": [2, 5]}, walk)
    assert sorted((s.x0 + s.x1) / 2 for s in fig.layout.shapes) == [2, 5]  # a band centred on each tied bar
    one = highlight(go.Figure(go.Bar(x=walk["step"], y=walk["mean_norm"])), {"x": 4}, walk)
    assert [(s.x0 + s.x1) / 2 for s in one.layout.shapes] == [4]


def _window_of_attention(T: int, q0: int, k0: int):
    """One head's softmax pattern over T positions drawn as a window: queries q0..T-1, keys k0..T-1."""
    import numpy as np

    from ui.figures.attention import attention_heatmap

    p = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    p[np.triu_indices(T, 1)] = np.nan
    labels = [f"{i} tok{i}" for i in range(T)]
    df = pd.DataFrame(p[q0:, k0:], index=labels[q0:], columns=labels[k0:])
    return attention_heatmap(df, labels[q0:], "softmax", "t", "key", "query", "p", key_labels=labels[k0:],
                             first=(q0, k0))


def test_an_outline_in_positions_lands_on_its_cell_of_a_window():
    """A lesson names cells by position (query 15, key 4); the window's first drawn row is query 13: the outline
    sits on the cell whose tick labels name those positions, and the axes keep the window's range."""
    fig = highlight(_window_of_attention(16, 13, 0), {"x": 4, "y": 15})
    (shape,) = fig.layout.shapes
    x, y = (shape.x0 + shape.x1) / 2, (shape.y0 + shape.y1) / 2
    xa, ya = fig.layout.xaxis, fig.layout.yaxis
    assert xa.ticktext[list(xa.tickvals).index(x)] == "4 tok4"
    assert ya.ticktext[list(ya.tickvals).index(y)] == "15 tok15"
    assert (shape.x1 - shape.x0, shape.y1 - shape.y0) == (1, 1)  # one cell


def test_an_outline_outside_the_window_draws_nothing():
    """Row 0 is not drawn in a window of queries 13-15: no outline stretched off the map (the page moves its
    window to the revealed row; see ui.controls.window_slider)."""
    fig = highlight(_window_of_attention(16, 13, 8), {"x": 0, "y": 0})
    assert len(fig.layout.shapes) == 0
    assert len(highlight(_window_of_attention(16, 13, 8), {"x": 4, "y": 14}).layout.shapes) == 0  # key 4 < 8
